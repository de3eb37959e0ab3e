// A small traffic generator that runs INSIDE a namespace (`ip netns exec NS node http-probe.js …`):
// counts which real server answered (nginx says its name in the body) and every failure, so tests can
// check distribution and "zero failed requests" without a process start per request.
//
//   node http-probe.js URL [--count N] [--concurrency C] [--keepalive] [--until-stdin-closes]
//                          [--local-address A] [--udp HOST:PORT]
// Prints one JSON line: { sent, ok, failed, bodies: {name: n}, errors: {message: n}, maxGapMs }.
import { request, Agent } from 'node:http';
import { createSocket } from 'node:dgram';

interface Result {
  sent: number;
  ok: number;
  failed: number;
  bodies: Record<string, number>;
  errors: Record<string, number>;
  maxGapMs: number;
}

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const url = args[0] ?? '';
const count = Number(opt('--count') ?? 100);
const concurrency = Number(opt('--concurrency') ?? 4);
const untilStdin = flag('--until-stdin-closes');
const udp = opt('--udp');
const localAddress = opt('--local-address');
const result: Result = { sent: 0, ok: 0, failed: 0, bodies: {}, errors: {}, maxGapMs: 0 };
let lastOk = performance.now();
let stop = false;

function record(body: string | undefined, err?: string): void {
  const t = performance.now();
  if (body !== undefined) {
    result.ok++;
    result.maxGapMs = Math.max(result.maxGapMs, t - lastOk);
    lastOk = t;
    result.bodies[body] = (result.bodies[body] ?? 0) + 1;
  } else {
    result.failed++;
    const key = err ?? 'unknown';
    result.errors[key] = (result.errors[key] ?? 0) + 1;
  }
}

const agent = flag('--keepalive') ? new Agent({ keepAlive: true, maxSockets: concurrency }) : undefined;

function httpOnce(): Promise<void> {
  return new Promise((resolve) => {
    result.sent++;
    const req = request(url, { agent: agent ?? false, timeout: 5000, ...(localAddress === undefined ? {} : { localAddress }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        if (res.statusCode === 200) record(body.trim());
        else record(undefined, `HTTP ${String(res.statusCode)}`);
        resolve();
      });
      res.on('error', (e) => {
        record(undefined, e.message);
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      record(undefined, e.code ?? e.message);
      resolve();
    });
    req.end();
  });
}

function udpOnce(target: string): Promise<void> {
  const i = target.lastIndexOf(':');
  const host = target.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(target.slice(i + 1));
  return new Promise((resolve) => {
    result.sent++;
    const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      record(undefined, 'udp timeout');
      sock.close();
      resolve();
    }, 2000);
    sock.on('message', (m) => {
      clearTimeout(timer);
      record(m.toString().trim());
      sock.close();
      resolve();
    });
    sock.send('who', port, host);
  });
}

async function worker(): Promise<void> {
  for (;;) {
    if (stop) return;
    if (!untilStdin && result.sent >= count) return;
    await (udp === undefined ? httpOnce() : udpOnce(udp));
  }
}

if (untilStdin) {
  process.stdin.on('end', () => {
    stop = true;
  });
  process.stdin.resume();
  // Say we are running, so the test can start changing things under load.
  process.stderr.write('running\n');
}
await Promise.all(Array.from({ length: concurrency }, () => worker()));
agent?.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
