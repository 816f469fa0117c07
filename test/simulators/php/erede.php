<?php

/*
 * Drives the official e.Rede PHP SDK, unchanged, against the simulator.
 * Usage: php erede.php <sdk root> '<json command>'; prints one JSON line.
 * Command: { base, pv, token, op, ... } where op is create | get | getByReference | capture |
 * cancel | getRefunds.
 */

require __DIR__ . '/erede-autoload.php';

[$script, $sdkRoot, $json] = $argv;
erede_autoload($sdkRoot);

use Rede\Environment;
use Rede\eRede;
use Rede\Exception\RedeException;
use Rede\Store;
use Rede\Transaction;

/*
 * Environment's constructor is private and its factories build only the production and sandbox
 * URLs; a closure bound to Environment's scope calls that same constructor with the simulator's
 * base, so the SDK builds `<base>/v1/transactions…` exactly as it does for e.Rede.
 */
function environmentAt(string $base): Environment
{
    $make = Closure::bind(fn (string $url) => new Environment($url), null, Environment::class);
    return $make($base);
}

function summary(Transaction $t): array
{
    $a = $t->getAuthorization();
    $capture = $t->getCapture();
    return [
        'tid' => $t->getTid(),
        'nsu' => $t->getNsu(),
        'reference' => $t->getReference(),
        'authorizationCode' => $t->getAuthorizationCode(),
        'returnCode' => $t->getReturnCode(),
        'returnMessage' => $t->getReturnMessage(),
        'amount' => $t->getAmount(),
        'cardBin' => $t->getCardBin(),
        'last4' => $t->getLast4(),
        'brand' => $t->getBrand()?->getName(),
        'refundId' => $t->getRefundId(),
        'cancelId' => $t->getCancelId(),
        'authorization' => $a === null ? null : [
            'tid' => $a->getTid(),
            'nsu' => $a->getNsu(),
            'reference' => $a->getReference(),
            'status' => $a->getStatus(),
            'amount' => $a->getAmount(),
            'returnCode' => $a->getReturnCode(),
            'last4' => $a->getLast4(),
        ],
        'capture' => $capture instanceof \Rede\Capture ? ['amount' => $capture->getAmount(), 'nsu' => $capture->getNsu()] : null,
        'refunds' => array_map(
            fn ($r) => ['refundId' => $r->getRefundId(), 'amount' => $r->getAmount(), 'status' => $r->getStatus()],
            $t->getRefunds()
        ),
    ];
}

function run(array $c, eRede $erede): Transaction
{
    switch ($c['op']) {
        case 'create':
            $t = (new Transaction($c['amount'], $c['reference']))
                ->creditCard($c['cardNumber'], $c['securityCode'], $c['month'], $c['year'], $c['holder'])
                ->capture($c['capture']);
            return $erede->create($t);
        case 'get':
            return $erede->get($c['tid']);
        case 'getByReference':
            return $erede->getByReference($c['reference']);
        case 'getRefunds':
            return $erede->getRefunds($c['tid']);
        case 'capture':
            return $erede->capture((new Transaction($c['amount']))->setTid($c['tid']));
        case 'cancel':
            return $erede->cancel((new Transaction($c['amount']))->setTid($c['tid']));
    }
    throw new InvalidArgumentException('unknown op ' . $c['op']);
}

$c = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
$logger = new MemoryLogger();
$erede = new eRede(new Store($c['pv'], $c['token'], environmentAt($c['base'])), $logger);
try {
    $out = ['ok' => summary(run($c, $erede))];
} catch (RedeException $e) {
    $out = ['error' => ['class' => 'RedeException', 'code' => $e->getCode(), 'message' => $e->getMessage()]];
} catch (Throwable $e) {
    $out = ['error' => ['class' => get_class($e), 'code' => $e->getCode(), 'message' => $e->getMessage()]];
}
$out['log'] = implode("\n", $logger->lines);
echo json_encode($out), "\n";
