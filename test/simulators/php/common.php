<?php

/**
 * What every scenario script shares: the SDK (unchanged) loaded through our autoloader, pointed at
 * the simulator through an Environment of our own, and one JSON line on stdout as the result.
 * Environment: CIELO_SDK_SRC, CIELO_URL (the simulator's base, with a trailing slash),
 * CIELO_MERCHANT_ID, CIELO_MERCHANT_KEY.
 */

// The 2019 SDK predates PHP 8's return types on JsonSerializable; its deprecation notices are not ours.
error_reporting(E_ALL & ~E_DEPRECATED);
ini_set('display_errors', 'stderr');

require __DIR__ . '/autoload.php';

use Cielo\API30\Ecommerce\CieloEcommerce;
use Cielo\API30\Ecommerce\Payment;
use Cielo\API30\Ecommerce\Request\CieloRequestException;
use Cielo\API30\Merchant;

/**
 * The simulator as the SDK's environment: both the transactional and the query URL on one host.
 * CieloEcommerce type-hints the SDK's Ecommerce\Environment class (which implements the SDK's
 * Environment interface) and its constructor is private, so this subclass brings its own.
 */
class SimulatorEnvironment extends \Cielo\API30\Ecommerce\Environment
{
    private $url;

    public function __construct($url)
    {
        $this->url = $url;
    }

    public function getApiUrl()
    {
        return $this->url;
    }

    public function getApiQueryURL()
    {
        return $this->url;
    }
}

function cielo()
{
    $merchant = new Merchant(getenv('CIELO_MERCHANT_ID'), getenv('CIELO_MERCHANT_KEY'));

    return new CieloEcommerce($merchant, new SimulatorEnvironment(getenv('CIELO_URL')));
}

/** The SDK's Payment as plain data (what the test asserts on). */
function paymentData(Payment $p)
{
    $card = $p->getCreditCard();

    return array(
        'paymentId' => $p->getPaymentId(),
        'status' => $p->getStatus(),
        'returnCode' => $p->getReturnCode(),
        'returnMessage' => $p->getReturnMessage(),
        'tid' => $p->getTid(),
        'proofOfSale' => $p->getProofOfSale(),
        'authorizationCode' => $p->getAuthorizationCode(),
        'amount' => $p->getAmount(),
        'capturedAmount' => $p->getCapturedAmount(),
        'voidedAmount' => $p->getVoidedAmount(),
        'capturedDate' => $p->getCapturedDate(),
        'voidedDate' => $p->getVoidedDate(),
        'receivedDate' => $p->getReceivedDate(),
        'cardNumber' => $card ? $card->getCardNumber() : null,
        'brand' => $card ? $card->getBrand() : null,
        'links' => $p->getLinks(),
    );
}

/** Runs one SDK call; prints `{ok: …}` or `{exception: …}` (a CieloRequestException's Cielo error). */
function run(callable $call)
{
    try {
        $out = array('ok' => $call(cielo()));
    } catch (CieloRequestException $e) {
        $error = $e->getCieloError();
        $out = array('exception' => array(
            'class' => get_class($e),
            'httpStatus' => $e->getCode(),
            'code' => $error ? $error->getCode() : null,
            'message' => $error ? $error->getMessage() : null,
        ));
    }
    echo json_encode($out), "\n";
}
