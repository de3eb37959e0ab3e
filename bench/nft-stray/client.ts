// Diagnostic client for repro.ts: new connection per request, records every request (local port, start/end wall time,
// who answered or the error) and writes them as JSON lines to FILE when stdin closes.
//   node client.js URL CONCURRENCY FILE
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';

const [url = '', concArg = '8', file = '/tmp/stray-client.jsonl'] = process.argv.slice(2);
const conc = Number(concArg);
interface Rec { port: number; t0: number; t1: number; who?: string; err?: string }
const recs: Rec[] = [];
let stop = false;

function portOf(s: Socket): number {
  const h = (s as unknown as { _handle?: { getsockname?: (o: { port?: number }) => number } })._handle;
  const o: { port?: number } = {};
  h?.getsockname?.(o);
  return o.port ?? 0;
}

function once(): Promise<void> {
  return new Promise((resolve) => {
    const rec: Rec = { port: 0, t0: Date.now() + (performance.now() % 1), t1: 0 };
    recs.push(rec);
    const req = request(url, { agent: false, timeout: 5000, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        rec.t1 = Date.now();
        if (res.statusCode === 200) rec.who = body.trim();
        else rec.err = `HTTP ${String(res.statusCode)}`;
        resolve();
      });
      res.on('error', (e) => { rec.t1 = Date.now(); rec.err = e.message; resolve(); });
    });
    req.on('socket', (s: Socket) => {
      setImmediate(() => { if (rec.port === 0) rec.port = portOf(s); });
      s.once('connect', () => { rec.port = s.localPort ?? rec.port; });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => { rec.t1 = Date.now(); rec.err = e.code ?? e.message; resolve(); });
    req.end();
  });
}

async function worker(): Promise<void> {
  while (!stop) await once();
}
process.stdin.on('end', () => { stop = true; });
process.stdin.resume();
process.stderr.write('running\n');
await Promise.all(Array.from({ length: conc }, () => worker()));
writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
const failed = recs.filter((r) => r.err !== undefined);
process.stdout.write(`${JSON.stringify({ sent: recs.length, failed: failed.length, failures: failed })}\n`);
