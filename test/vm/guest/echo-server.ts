// Runs INSIDE the guest, in a real server's namespace: a TCP echo server (one line in, the same line out,
// prefixed with this server's name) for the failover scenario's long-lived connections, on one or more ports.
//   node echo-server.js NAME PORT[,PORT…]
import { createServer, type Socket } from 'node:net';

const [name = 'rs', ports = '7000'] = process.argv.slice(2);

function echo(sock: Socket): void {
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
}

await Promise.all(ports.split(',').map((p) => new Promise<void>((resolve) => createServer(echo).listen(Number(p), '0.0.0.0', resolve))));
process.stdout.write('listening\n');
