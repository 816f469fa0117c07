<?php

// Keeps what the SDK logs, so a test can check that no card number or security code is in it.

use Psr\Log\LoggerInterface;

final class MemoryLogger implements LoggerInterface
{
    /** @var string[] */
    public array $lines = [];

    public function emergency(string|\Stringable $message, array $context = []): void { $this->log('emergency', $message); }
    public function alert(string|\Stringable $message, array $context = []): void { $this->log('alert', $message); }
    public function critical(string|\Stringable $message, array $context = []): void { $this->log('critical', $message); }
    public function error(string|\Stringable $message, array $context = []): void { $this->log('error', $message); }
    public function warning(string|\Stringable $message, array $context = []): void { $this->log('warning', $message); }
    public function notice(string|\Stringable $message, array $context = []): void { $this->log('notice', $message); }
    public function info(string|\Stringable $message, array $context = []): void { $this->log('info', $message); }
    public function debug(string|\Stringable $message, array $context = []): void { $this->log('debug', $message); }

    public function log($level, string|\Stringable $message, array $context = []): void
    {
        $this->lines[] = sprintf('[%s] %s', $level, $message);
    }
}
