<?php

/** `php get-sale.php <paymentId>`: getSale (the query URL). */
require __DIR__ . '/common.php';

use Cielo\API30\Ecommerce\CieloEcommerce;

$paymentId = $argv[1];

run(function (CieloEcommerce $cielo) use ($paymentId) {
    $sale = $cielo->getSale($paymentId);

    return array('merchantOrderId' => $sale->getMerchantOrderId(), 'payment' => paymentData($sale->getPayment()));
});
