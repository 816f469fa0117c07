<?php

namespace Rede\Service;

class CreateTransactionService extends AbstractTransactionsService
{
}
