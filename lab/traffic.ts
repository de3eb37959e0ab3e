// Continuous client traffic for the lab's scenarios: a few HTTP clients in a loop, each request on a
// new connection, until SIGTERM/SIGINT; then one JSON line on stdout:
//   { sent, ok, failed, longestGapMs, byServer: { rs1: n, … }, errors: { ECONNREFUSED: n, … }, failures: [...] }
// "failures" details the first 20 (wall-clock ms, client port, whether the connection was up): enough to
// find them in a capture.
// "longestGapMs" is the longest time without any successful response: what a user would notice.
// It writes "running" on stderr once SIGTERM will be answered with the stats (a SIGTERM before that, on a
// machine slow to start node, would end it silently).
//   node dist/lab/traffic.js URL [CONCURRENCY] [TIMEOUT_MS]
import { request } from 'node:http';

const [url, concurrencyArg, timeoutArg] = process.argv.slice(2);
if (url === undefined) {
  process.stderr.write('usage: traffic.js URL [CONCURRENCY] [TIMEOUT_MS]\n');
  process.exit(2);
}
const concurrency = Number(concurrencyArg ?? 4);
const timeoutMs = Number(timeoutArg ?? 2000);

let sent = 0;
let ok = 0;
let failed = 0;
let lastOk = performance.now();
let longestGapMs = 0;
let running = true;
const byServer: Record<string, number> = {};
const errors: Record<string, number> = {};
const failures: { atMs: number; port: number | null; connected: boolean; error: string }[] = [];

function once(): Promise<void> {
  return new Promise((resolve) => {
    sent++;
    const req = request(url as string, { agent: false, timeout: timeoutMs, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        if (res.statusCode === 200) {
          ok++;
          const now = performance.now();
          longestGapMs = Math.max(longestGapMs, now - lastOk);
          lastOk = now;
          const who = body.trim();
          byServer[who] = (byServer[who] ?? 0) + 1;
        } else {
          failed++;
          errors[`HTTP ${res.statusCode ?? 0}`] = (errors[`HTTP ${res.statusCode ?? 0}`] ?? 0) + 1;
        }
        resolve();
      });
      res.on('error', () => { resolve(); });
    });
    let port: number | null = null;
    req.on('socket', (s) => {
      s.once('connect', () => {
        port = s.localPort ?? null;
      });
    });
    req.on('timeout', () => req.destroy(new Error('ETIMEDOUT')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      failed++;
      const code = e.code ?? e.message;
      errors[code] = (errors[code] ?? 0) + 1;
      if (failures.length < 20) failures.push({ atMs: Date.now(), port, connected: port !== null, error: `${code}: ${e.message}` });
      resolve();
    });
    req.end();
  });
}

async function worker(): Promise<void> {
  while (running) await once();
}

const workers = Array.from({ length: concurrency }, () => worker());
const finish = (): void => {
  running = false;
  void Promise.all(workers).then(() => {
    longestGapMs = Math.max(longestGapMs, performance.now() - lastOk);
    process.stdout.write(`${JSON.stringify({ sent, ok, failed, longestGapMs: Math.round(longestGapMs), byServer, errors, failures })}\n`);
    process.exit(0);
  });
};
process.on('SIGTERM', finish);
process.on('SIGINT', finish);
process.stderr.write('running\n');
