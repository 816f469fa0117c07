<?php

namespace Rede;

use JsonSerializable;

interface RedeSerializable extends JsonSerializable
{
}
