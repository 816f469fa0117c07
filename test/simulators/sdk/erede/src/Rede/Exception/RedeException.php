<?php

namespace Rede\Exception;

use RuntimeException;

class RedeException extends RuntimeException
{
}
