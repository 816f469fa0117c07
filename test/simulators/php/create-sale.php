<?php

/** `php create-sale.php <merchantOrderId> <amount> <cardNumber> <capture:0|1> [expiry]`: createSale, as the SDK's README does it. */
require __DIR__ . '/common.php';

use Cielo\API30\Ecommerce\CieloEcommerce;
use Cielo\API30\Ecommerce\CreditCard;
use Cielo\API30\Ecommerce\Payment;
use Cielo\API30\Ecommerce\Sale;

list(, $orderId, $amount, $cardNumber, $capture) = $argv;
$expiry = isset($argv[5]) ? $argv[5] : '12/2030';

run(function (CieloEcommerce $cielo) use ($orderId, $amount, $cardNumber, $capture, $expiry) {
    $sale = new Sale($orderId);
    $sale->customer('Fulano de Tal');
    $payment = $sale->payment((int) $amount);
    $payment->setType(Payment::PAYMENTTYPE_CREDITCARD)
        ->setCapture($capture === '1')
        ->creditCard('123', CreditCard::VISA)
        ->setExpirationDate($expiry)
        ->setCardNumber($cardNumber)
        ->setHolder('Fulano de Tal');

    $created = $cielo->createSale($sale);

    return array('merchantOrderId' => $created->getMerchantOrderId(), 'payment' => paymentData($created->getPayment()));
});
