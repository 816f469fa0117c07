<?php

// A PSR-4 autoloader for the SDK extracted at test time (argument: its root) and our shim.

function erede_autoload(string $sdkRoot): void
{
    $map = [
        'Rede\\' => $sdkRoot . '/src/Rede/',
        'Psr\\Log\\' => __DIR__ . '/erede-shim/Psr/Log/',
    ];
    spl_autoload_register(function (string $class) use ($map): void {
        foreach ($map as $prefix => $dir) {
            if (strncmp($class, $prefix, strlen($prefix)) === 0) {
                $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
                if (is_file($file)) {
                    require $file;
                }
                return;
            }
        }
    });
    require_once __DIR__ . '/erede-shim/MemoryLogger.php';
}
