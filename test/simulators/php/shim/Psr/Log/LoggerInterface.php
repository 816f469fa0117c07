<?php

namespace Psr\Log;

/**
 * The PSR-3 logger interface the Cielo SDK type-hints (its `psr/log` dependency), written here so
 * the SDK runs without Composer. Only the interface: the tests pass no logger.
 */
interface LoggerInterface
{
    public function emergency($message, array $context = array());

    public function alert($message, array $context = array());

    public function critical($message, array $context = array());

    public function error($message, array $context = array());

    public function warning($message, array $context = array());

    public function notice($message, array $context = array());

    public function info($message, array $context = array());

    public function debug($message, array $context = array());

    public function log($level, $message, array $context = array());
}
