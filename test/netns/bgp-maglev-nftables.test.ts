// mh on the nftables dataplane with real nft: two director namespaces, each with its own nftables
// dataplane built from the same virtual server (real servers listed in a different order on each), send
// the same 5-tuples to the same real server — the property ECMP needs, since the routers may hand a
// flow to either director. The client pins each round to one director by a host route.
//
//   client 10.9.0.1 ── lan ── dir1 10.9.0.2 / 10.10.0.1 ── rs1..rs3 (nginx)
//                         └── dir2 10.9.0.3 / 10.10.0.2 ──┘   (both directors masquerade)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { createDataplaneLab, VIP4, type DataplaneLab } from '../support/dataplane-lab.js';
import type { Netns } from '../support/netns.js';
import type { NftablesDataplane } from '../../daemon/dataplane/nftables/backend.js';
import { createNftablesDataplane } from '../../daemon/dataplane/nftables/shards.js';
import type { RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';

const FLOW_PROBE = join(import.meta.dirname, '..', 'support', 'flow-probe.js');
const FIRST_PORT = 41_000;
const LAST_PORT = 41_149;

let lab: DataplaneLab;
let dir2: Netns;
let dp1: NftablesDataplane;
let dp2: NftablesDataplane;

function service(addresses: string[], down: string[] = []): ServiceSpec {
  const realServers: RealServerSpec[] = addresses.map((a) => ({ id: `${a}:80`, address: a, port: 80, weight: down.includes(a) ? 0 : 1, method: 'nat' }));
  return { id: `tcp:${VIP4}:80`, family: 4, protocol: 'tcp', address: VIP4, port: 80, scheduler: 'mh', schedulerFlags: ['mh-fallback', 'mh-port'], realServers };
}

/** The answering real server of each fixed flow, sent through one director. */
async function flowsVia(gateway: string): Promise<Record<string, string>> {
  await lab.client.sh(`ip route replace ${VIP4}/32 via ${gateway}`);
  const { stdout } = await lab.client.exec('node', [FLOW_PROBE, VIP4, '80', String(FIRST_PORT), String(LAST_PORT)], { timeoutMs: 90_000 });
  const flows = JSON.parse(stdout) as Record<string, string>;
  const errors = Object.entries(flows).filter(([, b]) => b.startsWith('error'));
  assert.deepEqual(errors, [], `flows through ${gateway} that failed`);
  return flows;
}

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft', 'nginx', 'node', 'conntrack');
  lab = await createDataplaneLab('mhnft');
  dir2 = await lab.topo.addHost({ name: 'dir2', addresses: ['10.9.0.3/24', '10.10.0.2/24'] });
  await dir2.sh('sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0 net.ipv4.conf.eth0.send_redirects=0');
  dp1 = createNftablesDataplane({ netns: lab.director.name, masquerade: true, driftCheckIntervalMs: 0 });
  dp2 = createNftablesDataplane({ netns: dir2.name, masquerade: true, driftCheckIntervalMs: 0 });
});

after(async () => {
  await (dp1 as NftablesDataplane | undefined)?.close();
  await (dp2 as NftablesDataplane | undefined)?.close();
  await (lab as DataplaneLab | undefined)?.destroy();
});

test('two nftables directors with the same real servers send every one of 150 flows to the same real server', async () => {
  await dp1.apply({ services: [service(lab.rs4)] });
  await dp2.apply({ services: [service([...lab.rs4].reverse())] });
  // Real nft read back: the 4,093-slot map is what lvsd wrote, on both.
  assert.deepEqual(await dp1.checkDrift(), []);
  assert.deepEqual(await dp2.checkDrift(), []);
  const one = await flowsVia('10.9.0.2');
  const two = await flowsVia('10.9.0.3');
  assert.deepEqual(two, one);
  const spread = new Map<string, number>();
  for (const b of Object.values(one)) spread.set(b, (spread.get(b) ?? 0) + 1);
  assert.deepEqual([...spread.keys()].sort(), lab.rsNames, `every real server takes flows: ${JSON.stringify([...spread])}`);
  for (const [name, n] of spread) assert.ok(n >= 25, `${name} got ${String(n)} of 150`);
});

test('a failed real server (weight 0 on both): only its flows move, and both directors still agree', async () => {
  const before = await flowsVia('10.9.0.2');
  await dp1.apply({ services: [service(lab.rs4, [lab.rs4[1] ?? ''])] });
  await dp2.apply({ services: [service([...lab.rs4].reverse(), [lab.rs4[1] ?? ''])] });
  // New flows on old tuples: conntrack would otherwise keep each tuple's first choice.
  await lab.director.exec('conntrack', ['-F']).catch(() => undefined);
  await dir2.exec('conntrack', ['-F']).catch(() => undefined);
  const one = await flowsVia('10.9.0.2');
  const two = await flowsVia('10.9.0.3');
  assert.deepEqual(two, one);
  const failed = lab.rsNames[1] ?? '';
  let moved = 0;
  let movedOthers = 0;
  for (const [port, was] of Object.entries(before)) {
    assert.notEqual(one[port], failed);
    if (one[port] !== was) moved++;
    if (one[port] !== was && was !== failed) movedOthers++;
  }
  const had = Object.values(before).filter((b) => b === failed).length;
  assert.ok(moved >= had, `the failed server's ${String(had)} flows moved (${String(moved)} in all)`);
  // Maglev moves little more than the leaver's own slots; with 150 flows that is a handful at most.
  assert.ok(movedOthers <= 12, `${String(movedOthers)} flows of servers still up moved`);
});
