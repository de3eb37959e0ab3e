// The state file's write cost with a big audit log (issue 17: a 150 MB state file made every override
// write take a second). Starts from a file bloated the old way — 10,000 audit entries of ~15 KB — opens
// it (the audit bound trims it), then times override writes through the store (tmp file, fsync, rename,
// fsync of the directory). The anchor, in the same run: writing the same bytes with one fsync'd
// writeFile. Prints figures and the ratio; never fails on a timing.
//
//   node dist/bench/state-write.js            (BENCH_WRITES=30 by default)
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../daemon/state/store.js';

const WRITES = Number(process.env.BENCH_WRITES ?? 30);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

const dir = mkdtempSync(join(tmpdir(), 'lvsd-bench-state-'));
try {
  const file = join(dir, 'state.json');
  await openStore(file, { passwordCost: 1024 });
  const state = JSON.parse(await readFile(file, 'utf8')) as { audit: unknown[] };
  const changes = Array.from({ length: 300 }, (_, i) => `add real-server tcp:192.0.2.1:80/10.0.${String(i >> 8)}.${String(i & 255)}:80 (weight 1)`);
  state.audit = Array.from({ length: 10_000 }, (_, i) => ({ id: i + 1, at: new Date().toISOString(), who: 'alice', action: 'config.apply', target: '/etc/lvsd/lvsd.yaml', before: { hash: 'a' }, after: { hash: 'b', changes } }));
  writeFileSync(file, JSON.stringify(state, null, 2));
  const bloated = statSync(file).size;

  const opened = performance.now();
  const { store: big } = await openStore(file, { passwordCost: 1024 });
  const openMs = performance.now() - opened;
  const times: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const t = performance.now();
    await big.setOverride({ service: 'tcp:192.0.2.1:80', realServer: `10.0.0.${String(i % 250)}:80` }, { weight: i % 100 }, 'bench');
    times.push(performance.now() - t);
  }
  const after = statSync(file).size;

  // anchor: the same bytes, one writeFile + fsync
  const text = await readFile(file, 'utf8');
  const anchor: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const t = performance.now();
    const fh = await open(join(dir, 'anchor.json'), 'w');
    await fh.writeFile(text);
    await fh.sync();
    await fh.close();
    anchor.push(performance.now() - t);
  }
  const w = median(times);
  const a = median(anchor);
  console.log(`state file: ${(bloated / 1e6).toFixed(1)} MB as bloated, ${(after / 1e6).toFixed(2)} MB after the audit bound (open + trim ${openMs.toFixed(0)} ms)`);
  console.log(`override write (median of ${String(WRITES)}): ${w.toFixed(1)} ms; anchor (writeFile + fsync of the same bytes): ${a.toFixed(1)} ms; ratio ${(w / a).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
