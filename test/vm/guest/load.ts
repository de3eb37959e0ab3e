// HTTP load for VM tests, run in the client namespace. A new TCP connection per request (what a
// scheduler sees), counted per response body (each real server answers with its own name).
//   node load.js [--count N] [--concurrency C] URL...
// With --count: N requests per URL, then prints {"url": {body: n, ..., "failed": n}}. Without: runs until
// SIGTERM and prints {"ok": n, "failed": n, "errors": {...}, "bodies": {...}}. The 10 s request timeout is
// generous on purpose: a TCG guest on a loaded host can stall for seconds; a dataplane fault resets or hangs.
import http from 'node:http';

const args = process.argv.slice(2);
const opt = (name: string, def: number): number => {
  const i = args.indexOf(name);
  if (i < 0) return def;
  const v = Number(args[i + 1]);
  args.splice(i, 2);
  return v;
};
const count = opt('--count', 0);
const concurrency = opt('--concurrency', 1);
const urls = args;

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 10_000, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        if (res.statusCode === 200) resolve(body.trim());
        else reject(new Error(`HTTP ${res.statusCode ?? 0}`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

if (count > 0) {
  const out: Record<string, Record<string, number>> = {};
  for (const url of urls) {
    const tally: Record<string, number> = {};
    let left = count;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left > 0) {
          left--;
          const key = await get(url).catch((e: unknown) => `failed: ${(e as Error).message}`);
          tally[key] = (tally[key] ?? 0) + 1;
        }
      }),
    );
    out[url] = tally;
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
  let stop = false;
  const stats = { ok: 0, failed: 0, errors: {} as Record<string, number>, bodies: {} as Record<string, number> };
  process.on('SIGTERM', () => {
    stop = true;
  });
  const url = urls[0] ?? '';
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stop) {
        try {
          const b = await get(url);
          stats.ok++;
          stats.bodies[b] = (stats.bodies[b] ?? 0) + 1;
        } catch (e) {
          stats.failed++;
          const m = (e as Error).message;
          stats.errors[m] = (stats.errors[m] ?? 0) + 1;
        }
      }
    }),
  );
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}
