// Runs inside a director's namespace: accepts on a unix socket (reachable from the host's filesystem)
// and connects to a TCP address inside the namespace. The lab pairs it with a host-side listener on
// 127.0.0.1 so an operator's browser reaches each director's panel.
//   node dist/lab/relay.js UNIX_PATH HOST:PORT
import { connect, createServer } from 'node:net';
import { rmSync } from 'node:fs';

const [path, target] = process.argv.slice(2);
if (path === undefined || target === undefined) {
  process.stderr.write('usage: relay.js UNIX_PATH HOST:PORT\n');
  process.exit(2);
}
const sep = target.lastIndexOf(':');
const host = target.slice(0, sep);
const port = Number(target.slice(sep + 1));

rmSync(path, { force: true });
const server = createServer((client) => {
  const upstream = connect({ host, port });
  client.pipe(upstream).pipe(client);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
});
server.listen(path);
const stop = (): void => {
  server.close();
  rmSync(path, { force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
