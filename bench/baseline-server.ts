import { createServer } from 'node:http';

/**
 * The baseline: a bare Node http server in its own process, reading the request body and
 * answering a fixed body of the same size as the gateway's. The gateway's figure divided by this
 * one is what the framework, queue, vault and database cost.
 */
const body = process.argv[2] ?? '{}';
const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
