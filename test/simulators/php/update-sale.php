<?php

/** `php update-sale.php <capture|cancel> <paymentId> [amount]`: captureSale or cancelSale (no amount = total). */
require __DIR__ . '/common.php';

use Cielo\API30\Ecommerce\CieloEcommerce;

$kind = $argv[1];
$paymentId = $argv[2];
$amount = isset($argv[3]) ? (int) $argv[3] : null;

run(function (CieloEcommerce $cielo) use ($kind, $paymentId, $amount) {
    $payment = $kind === 'capture' ? $cielo->captureSale($paymentId, $amount, 0) : $cielo->cancelSale($paymentId, $amount);

    return paymentData($payment);
});
