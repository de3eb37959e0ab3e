// The benchmark's real servers: one cheap process listening on N TCP ports (BASE..BASE+N-1) that
// answers any request with a minimal HTTP 200 and closes. "kill PORT" on stdin closes that port's
// listening socket (new connections are then refused) and prints {"killed":PORT,"t":ms-since-epoch}.
// "revive" listens again on every killed port.
//   node health-targets.js ADDRESS BASE N
import { createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

const [address = '127.0.0.1', baseArg = '10000', countArg = '100'] = process.argv.slice(2);
const base = Number(baseArg);
const count = Number(countArg);
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n');
let connections = 0;

function onConnection(s: Socket): void {
  connections++;
  s.on('error', () => undefined);
  s.once('data', () => {
    s.end(RESPONSE);
  });
}

const servers = new Map<number, Server>();
let listening = 0;
for (let i = 0; i < count; i++) {
  const port = base + i;
  const srv = createServer({ noDelay: true }, onConnection);
  srv.on('error', (e) => {
    process.stderr.write(`port ${port}: ${e.message}\n`);
    process.exit(1);
  });
  srv.listen({ port, host: address, backlog: 511 }, () => {
    if (++listening === count) process.stdout.write(JSON.stringify({ ready: count }) + '\n');
  });
  servers.set(port, srv);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'kill') {
    const port = Number(arg);
    const srv = servers.get(port);
    if (srv !== undefined) {
      srv.close();
      servers.delete(port);
      process.stdout.write(JSON.stringify({ killed: port, t: Date.now() }) + '\n');
    }
  } else if (cmd === 'revive') {
    // Listen again on every killed port (between the keepalived and the lvsd runs).
    let pending = 0;
    for (let i = 0; i < count; i++) {
      const port = base + i;
      if (servers.has(port)) continue;
      const srv = createServer({ noDelay: true }, onConnection);
      pending++;
      srv.listen({ port, host: address, backlog: 511 }, () => {
        if (--pending === 0) process.stdout.write(JSON.stringify({ revived: true }) + '\n');
      });
      servers.set(port, srv);
    }
    if (pending === 0) process.stdout.write(JSON.stringify({ revived: true }) + '\n');
  } else if (cmd === 'stats') {
    const u = process.cpuUsage();
    process.stdout.write(JSON.stringify({ connections, cpuUs: u.user + u.system, rss: process.memoryUsage().rss }) + '\n');
  } else if (cmd === 'quit') {
    process.exit(0);
  }
});
