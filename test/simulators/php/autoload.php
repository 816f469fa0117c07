<?php

/**
 * A PSR-0 autoloader over two roots: the shim (Psr\Log) beside this file and the Cielo SDK's own
 * `src` (its composer.json maps `Cielo` to `src` with PSR-0), whose path comes from CIELO_SDK_SRC.
 */
$roots = array(__DIR__ . '/shim', getenv('CIELO_SDK_SRC'));

spl_autoload_register(function ($class) use ($roots) {
    $relative = str_replace(array('\\', '_'), '/', ltrim($class, '\\')) . '.php';
    foreach ($roots as $root) {
        if ($root && is_file($root . '/' . $relative)) {
            require $root . '/' . $relative;
            return;
        }
    }
});
