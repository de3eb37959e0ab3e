// Whole packets made by hand on the wire (test/support/vrrp-wire-fuzz-main.ts: IPv4 options, lengths,
// fragments, header checksums; IPv6 hop limits, extension headers, payload lengths; other VRIDs in floods)
// at a running lvsd pair with an IPv4 and an IPv6 instance: nobody changes state, nobody dies, memory stays
// put, and what reaches lvsd is counted as a drop. LVSD_FUZZ_N sets the packet count (25,000 in CI; the
// closing notes give a 1,000,000-packet run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startLvsdNode } from '../support/vrrp-node.js';
import { labSuite, macOf, sleep, VIP4, VIP6 } from '../support/vrrp-lab.js';
import { children } from '../support/crash.js';
import { fuzzSettings } from '../support/fuzz-text.js';
import type { VrrpOptions } from '../../daemon/vrrp/options.js';
import type { VrrpSnapshot } from '../../daemon/vrrp/protocol.js';

const suite = labSuite('vrrpwf', 3, ['ip']);

const options = (priority: number): VrrpOptions => ({
  instances: [
    { name: 'VI_4', interface: 'eth0', vrid: 51, version: 3, advertIntervalMs: 100, priority, vips: [`${VIP4}/24`] },
    { name: 'VI_6', interface: 'eth0', vrid: 52, version: 3, advertIntervalMs: 100, priority, vips: [`${VIP6}/64`] },
  ],
  garp: { masterDelayMs: 0 },
});

const drops = (s: VrrpSnapshot, name: string): Record<string, number> => s.instances.find((i) => i.name === name)?.counters.drops ?? {};
const sum = (d: Record<string, number>): number => Object.values(d).reduce((x, y) => x + y, 0);
const delta = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([k, v]): [string, number] => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0));
/** Resident memory of a process and its children (the VRRP engine process), in KiB. */
const rssKiB = (pid: number): number => [pid, ...children(pid)].reduce((n, p) => n + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0), 0);

test('hand-made IPv4 and IPv6 packets around broken adverts change nothing, kill nothing, and are counted', { timeout: 600_000 }, async (t) => {
  const { n: count, seed } = fuzzSettings();
  const master = suite.own(await startLvsdNode(suite.host(1), options(150)));
  await master.waitState('VI_4', 'MASTER', 8000);
  await master.waitState('VI_6', 'MASTER', 8000);
  const backup = suite.own(await startLvsdNode(suite.host(2), options(100)));
  await sleep(1500);
  assert.equal(backup.state('VI_4') ?? 'BACKUP', 'BACKUP');
  const transitionsBefore = master.transitions.length + backup.transitions.length;
  const [m0, b0] = [await master.snapshot(), await backup.snapshot()];
  const rss0 = rssKiB(master.child.pid ?? 0);

  const fuzzer = suite.host(3);
  const ifindex = Number((await fuzzer.exec('cat', ['/sys/class/net/eth0/ifindex'])).stdout.trim());
  const linkLocal = (await fuzzer.exec('ip', ['-6', '-o', 'addr', 'show', 'dev', 'eth0', 'scope', 'link'])).stdout.match(/inet6 (fe80::[0-9a-f:]+)\//)?.[1];
  assert.ok(linkLocal !== undefined, 'the fuzzer host has a link-local address');
  const args = {
    ifindex, src4: suite.lab.ip4(3), src6: linkLocal, v4: { vrid: 51, vips: [VIP4] }, v6: { vrid: 52, vips: [VIP6] },
    master4: suite.lab.ip4(1), master6: suite.lab.ip6(1), masterMac: await macOf(suite.host(1)), count, seed,
  };
  const main = fileURLToPath(new URL('../support/vrrp-wire-fuzz-main.js', import.meta.url));
  const { stdout } = await fuzzer.exec(process.execPath, [main, JSON.stringify(args)], { timeoutMs: 540_000 });
  const report = JSON.parse(stdout) as { sent: number; kinds: Record<string, number>; seconds: number };
  assert.equal(report.sent, count);
  for (const k of ['v4-options', 'v4-length', 'v4-checksum', 'v4-fragment', 'v4-fragments', 'v4-other-vrid', 'v4', 'v6-ext', 'v6-checksum', 'v6-length', 'v6-hop-limit', 'v6']) {
    assert.ok((report.kinds[k] ?? 0) > count / 100, `${k}: ${report.kinds[k] ?? 0} of ${count}`);
  }
  await sleep(1000);

  const [m1, b1] = [await master.snapshot(), await backup.snapshot()];
  const rss1 = rssKiB(master.child.pid ?? 0);
  const md4 = delta(drops(m1, 'VI_4'), drops(m0, 'VI_4'));
  const md6 = delta(drops(m1, 'VI_6'), drops(m0, 'VI_6'));
  t.diagnostic(`${report.sent} packets in ${report.seconds} s (seed ${seed}): ${JSON.stringify(report.kinds)}`);
  t.diagnostic(`master counted drops: VI_4 ${sum(md4)} ${JSON.stringify(md4)}; VI_6 ${sum(md6)} ${JSON.stringify(md6)}`);
  t.diagnostic(`master RSS ${Math.round(rss0 / 1024)} → ${Math.round(rss1 / 1024)} MiB`);
  // A timer that fired late (a busy loop, a loaded machine) is what would let a flood cost an advert.
  const late = (s: VrrpSnapshot): string => `${s.instances.map((i) => `${i.name} ${i.counters.maxTimerLateMs} ms`).join(', ')}; loop delay p99 ${s.loopDelayMs.p99} max ${s.loopDelayMs.max} ms`;
  t.diagnostic(`latest timers: master ${late(m1)}; backup ${late(b1)}`);

  // Nothing changed: no transition, the same roles, both alive.
  const all = [...master.transitions.map((x) => ({ node: 'master', ...x })), ...backup.transitions.map((x) => ({ node: 'backup', ...x }))];
  assert.equal(all.length, transitionsBefore, `transitions: ${JSON.stringify(all)}`);
  for (const name of ['VI_4', 'VI_6']) {
    assert.equal(m1.instances.find((i) => i.name === name)?.state, 'MASTER', `${name} on the master`);
    assert.equal(b1.instances.find((i) => i.name === name)?.state, 'BACKUP', `${name} on the backup`);
  }
  assert.deepEqual(await suite.lab.holders(VIP4), ['d1']);
  assert.deepEqual(await suite.lab.holders(VIP6), ['d1']);
  for (const node of [master, backup]) assert.equal(node.child.exitCode, null, 'still running');
  // What the kernel passes up is judged and counted: the broken adverts that got through each layer.
  for (const reason of ['checksum', 'ttl']) {
    assert.ok((md4[reason] ?? 0) + (md6[reason] ?? 0) > 0, `no drop counted for ${reason}: ${JSON.stringify({ md4, md6 })}`);
  }
  // Other VRIDs never reach the runtime: each socket's filter drops them in the kernel (net/vrid-filter.ts).
  assert.equal((md4['other-vrid'] ?? 0) + (md6['other-vrid'] ?? 0), 0, `other VRIDs got past the socket filter: ${JSON.stringify({ md4, md6 })}`);
  assert.ok((md6.checksum ?? 0) > 0, 'IPv6 checksums are checked with the IPv6 pseudo-header');
  // Memory did not grow with the packets (a per-source table, a log buffer…): 64 MiB is far above noise.
  assert.ok(rss1 - rss0 < 64 * 1024, `master RSS grew by ${Math.round((rss1 - rss0) / 1024)} MiB`);
  // The master kept advertising through the flood (the backup would have taken over otherwise).
  const rx = (s: VrrpSnapshot): number => s.instances.find((i) => i.name === 'VI_4')?.counters.advertsReceived ?? 0;
  assert.ok(rx(b1) > rx(b0), `backup heard ${rx(b1) - rx(b0)} adverts`);
});
