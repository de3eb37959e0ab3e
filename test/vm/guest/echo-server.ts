// Runs INSIDE the guest, in a real server's namespace: a TCP echo server (one line in, the same line out,
// prefixed with this server's name) for the failover scenario's long-lived connections.
//   node echo-server.js NAME PORT
import { createServer } from 'node:net';

const [name = 'rs', port = '7000'] = process.argv.slice(2);
const server = createServer((sock) => {
  sock.setNoDelay(true);
  let buf = '';
  sock.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      sock.write(`${name} ${buf.slice(0, nl)}\n`);
      buf = buf.slice(nl + 1);
    }
  });
  sock.on('error', () => undefined);
});
server.listen(Number(port), '0.0.0.0', () => {
  process.stdout.write('listening\n');
});
