// Runs inside a director's namespace: accepts on a unix socket (reachable from the host's filesystem)
// and connects to a TCP address inside the namespace. The lab pairs it with a host-side listener on
// 127.0.0.1 so an operator's browser reaches each director's panel. With CA_FILE it is the TLS client of
// an API served over TLS (the peered lab, lab/peering.ts), checking the certificate against that CA, so
// the browser on the host still speaks plain http to 127.0.0.1.
//   node dist/lab/relay.js UNIX_PATH HOST:PORT [CA_FILE]
import { connect, createServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync, rmSync } from 'node:fs';

const [path, target, caFile] = process.argv.slice(2);
if (path === undefined || target === undefined) {
  process.stderr.write('usage: relay.js UNIX_PATH HOST:PORT [CA_FILE]\n');
  process.exit(2);
}
const sep = target.lastIndexOf(':');
const host = target.slice(0, sep);
const port = Number(target.slice(sep + 1));
const ca = caFile === undefined ? undefined : readFileSync(caFile, 'utf8');
const upstreamTo = (): Socket => (ca === undefined ? connect({ host, port }) : tlsConnect({ host, port, ca }));

rmSync(path, { force: true });
const server = createServer((client) => {
  const upstream = upstreamTo();
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
