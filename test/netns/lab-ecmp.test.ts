// `LVSD_LAB=ecmp npm start` (lab/ecmp.ts), run as an operator would: the lab comes up with one next hop per
// director on the router, the printed "try it" command is answered by a real server, each panel answers on its
// host port, the printed graceful stop takes exactly that director's next hop away, the printed withdraw takes
// exactly the second one's, and Ctrl-C tears every namespace down.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { freePort } from '../support/loopback-servers.js';
import { until } from '../support/ecmp-lab.js';

const run = promisify(execFile);
const MAIN = join(import.meta.dirname, '..', '..', 'lab', 'main.js');
let child: ChildProcess | undefined;

// A failed assertion must not leave the lab behind: Ctrl-C first (it tears down), a kill only if that hangs.
after(async () => {
  const c = child;
  if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGINT');
  const timer = setTimeout(() => c.kill('SIGKILL'), 30_000);
  await gone;
  clearTimeout(timer);
});

/** The command printed after a banner label, up to two spaces and a parenthesis (the explanation). */
function hint(banner: string, label: string): string {
  const line = banner.split('\n').find((l) => l.trimStart().startsWith(label));
  assert.ok(line !== undefined, `no "${label}" line in:\n${banner}`);
  return line.trim().slice(label.length).replace(/\s{3}\(.*$/, '').trim();
}

const sh = async (command: string): Promise<string> => (await run('sh', ['-c', command], { timeout: 60_000 })).stdout;

test('LVSD_LAB=ecmp brings the ECMP lab up; its printed commands stop one director, withdraw another; Ctrl-C removes it', { timeout: 300_000 }, async (t) => {
  requireRoot();
  requireCommands('ip', 'nft', 'bird', 'birdc', 'nginx');
  const ports = [await freePort(), await freePort(), await freePort()];
  const lab = spawn(process.execPath, [MAIN], {
    env: { ...process.env, LVSD_LAB: 'ecmp', LVSD_LAB_PORT1: String(ports[0]), LVSD_LAB_PORT2: String(ports[1]), LVSD_LAB_PORT3: String(ports[2]) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = lab;
  let out = '';
  let err = '';
  lab.stdout.on('data', (b: Buffer) => (out += b.toString()));
  lab.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => lab.once('exit', (code) => { r(code); }));
  await until(() => Promise.resolve(out.includes('Ctrl-C tears it all down') || lab.exitCode !== null), 'the banner', 240_000);
  assert.match(out, /Ctrl-C tears it all down/, `${out}\n${err}`);
  t.diagnostic(out);

  const watch = hint(out, 'watch it').replace(/^watch -n [\d.]+ /, '');
  const nexthops = async (): Promise<string[]> => [...(await sh(watch)).matchAll(/via (10\.71\.0\.\d+)/g)].map((m) => m[1] ?? '').sort();
  assert.deepEqual(await nexthops(), ['10.71.0.1', '10.71.0.2', '10.71.0.3']);
  assert.equal([...out.matchAll(/^\s+nexthop via 10\.71\.0\.[123] dev eth0/gm)].length, 3, 'the printed route has three next hops');

  assert.match(await sh(hint(out, 'try it')), /^rs[123] 10\.72\.0\.[123]\n$/);
  for (const port of ports) {
    const r = await fetch(`http://127.0.0.1:${String(port)}/`);
    assert.equal(r.status, 200, `panel on ${String(port)}`);
    await r.arrayBuffer();
  }
  assert.doesNotMatch(out, /pkill|killall/);

  await sh(hint(out, 'graceful stop'));
  await until(async () => JSON.stringify(await nexthops()) === JSON.stringify(['10.71.0.2', '10.71.0.3']), 'd1\'s next hop to leave after the printed graceful stop', 60_000);
  assert.match(await sh(hint(out, 'withdraw')), /withdrawn/);
  await until(async () => JSON.stringify(await nexthops()) === JSON.stringify(['10.71.0.3']), 'd2\'s next hop to leave after the printed withdraw', 60_000);
  assert.match(await sh(hint(out, 'try it')), /^rs[123] 10\.72\.0\.3\n$/);

  lab.kill('SIGINT');
  assert.equal(await exited, 0, err);
  const left = (await run('ip', ['netns', 'list'])).stdout.split('\n').filter((l) => l.startsWith(`lvt-ecmp-lab-${String(lab.pid)}-`));
  assert.deepEqual(left, []);
});
