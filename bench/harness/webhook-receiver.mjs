// The webhooks scenario's receiver (bench/scenarios/webhooks.ts): a plain node:http server on PORT
// that reads each request to its end and answers 200, as a receiver that only acknowledges would.
// GET /healthz answers too, so the harness can wait for it like any server it starts.
import http from 'node:http';
import process from 'node:process';

let received = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method === 'POST') received++;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => {
  process.stdout.write(`received ${received} webhook requests\n`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
