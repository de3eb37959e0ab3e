// Active-active behind ECMP, all real (test/support/ecmp-lab.ts): a BIRD router with L4 multipath, three
// directors each running lvsd (nftables, mh) + BIRD, three nginx real servers. The router's kernel table is
// the judge of what is announced; nginx's /who answer ("rs2 10.72.0.3") says which real server took a flow
// and through which director. Fixed client ports replay the same 5-tuples in every round, so a flow that
// ECMP hands to another director (a crash, a stop, a director back) can be checked for its real server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { createEcmpLab, ECMP_VIP, type EcmpLab } from '../support/ecmp-lab.js';
import { startLoad } from '../support/dataplane-lab.js';
import { BIN } from '../support/lvsd-run.js';

const FLOW_PROBE = join(import.meta.dirname, '..', 'support', 'flow-probe.js');
const FIRST_PORT = 42_000;
const FLOWS = 600;
/** The graceful-stop test's own flows follow the first FLOWS ports (its load runs meanwhile, on ephemeral ports). */
const STOP_FLOWS = 200;

let lab: EcmpLab;

interface Flow {
  rs: string;
  director: string;
}

/** Replays the fixed flows (or the first `count`, from `first`); every one must be answered. */
async function replay(count = FLOWS, first = FIRST_PORT): Promise<Map<number, Flow>> {
  const { stdout } = await lab.client.exec('node', [FLOW_PROBE, ECMP_VIP, '80', String(first), String(first + count - 1), '/who'], { timeoutMs: 90_000 });
  const answers = JSON.parse(stdout) as Record<string, string>;
  const failed = Object.entries(answers).filter(([, a]) => a.startsWith('error'));
  assert.deepEqual(failed, [], 'flows that got no answer');
  const flows = new Map<number, Flow>();
  for (const [port, a] of Object.entries(answers)) {
    const [rs = '', seen = ''] = a.split(' ');
    const d = lab.directors.find((x) => x.back === seen);
    assert.ok(d !== undefined, `port ${port}: answer "${a}" names no director`);
    flows.set(Number(port), { rs, director: d.name });
  }
  return flows;
}

function perDirector(flows: Map<number, Flow>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of flows.values()) out[f.director] = (out[f.director] ?? 0) + 1;
  return out;
}

/** Flows whose director changed between two rounds, and how many of those reached another real server. */
function compare(a: Map<number, Flow>, b: Map<number, Flow>): { moved: number; otherServer: number } {
  let moved = 0;
  let otherServer = 0;
  for (const [port, x] of a) {
    const y = b.get(port);
    if (y === undefined) continue;
    if (y.director !== x.director) moved++;
    if (y.rs !== x.rs) otherServer++;
  }
  return { moved, otherServer };
}

const core = (...names: string[]): string[] => names.map((n) => lab.directors.find((d) => d.name === n)?.core ?? n);

let first: Map<number, Flow>;

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft', 'bird', 'birdc', 'nginx', 'node');
  lab = await createEcmpLab('ecmp');
  // The fixed flow ports (the stop test's too) are never handed out as ephemeral ports: the load generator's
  // connections (in TIME_WAIT after the stop test, or running during it) held some, and replays failed with EADDRINUSE.
  await lab.client.sh(`sysctl -qw net.ipv4.ip_local_reserved_ports=${FIRST_PORT}-${FIRST_PORT + FLOWS + STOP_FLOWS - 1}`);
  await Promise.all(lab.directors.map((d) => lab.startDirector(d)));
});

after(async () => {
  await (lab as EcmpLab | undefined)?.destroy();
});

test('the router installs one next hop per healthy director, and flows spread over all three', { timeout: 120_000 }, async (t) => {
  await lab.waitNexthops(core('d1', 'd2', 'd3'), 60_000);
  first = await replay();
  const spread = perDirector(first);
  t.diagnostic(`spread over directors: ${JSON.stringify(spread)}`);
  assert.deepEqual(Object.keys(spread).sort(), ['d1', 'd2', 'd3'], JSON.stringify(spread));
  // L4 hashing over 600 flows: each director near a third (200); a bound that only a broken hash misses.
  for (const [d, n] of Object.entries(spread)) assert.ok(n >= 120 && n <= 280, `${d} took ${String(n)} of ${String(FLOWS)}: ${JSON.stringify(spread)}`);
  const servers = new Set([...first.values()].map((f) => f.rs));
  assert.deepEqual([...servers].sort(), lab.rsNames);
});

test('a director crash: its route is withdrawn, and its flows reach the same real servers through the others', { timeout: 120_000 }, async (t) => {
  const d1 = lab.directors[0];
  assert.ok(d1 !== undefined);
  await lab.crash(d1);
  await lab.waitNexthops(core('d2', 'd3'), 30_000);
  const after = await replay();
  assert.equal(perDirector(after).d1, undefined);
  const { moved, otherServer } = compare(first, after);
  const ofD1 = [...first.values()].filter((f) => f.director === 'd1').length;
  t.diagnostic(`flows of d1: ${String(ofD1)}; flows on another director after the crash: ${String(moved)}`);
  assert.ok(moved >= ofD1, `all ${String(ofD1)} flows of d1 moved to another director (moved: ${String(moved)})`);
  assert.equal(otherServer, 0, 'every flow reached the real server it had before, whichever director took it');
});

test('a graceful stop under load: the route leaves during the drain, new connections are all served, lvsd exits 0', { timeout: 120_000 }, async (t) => {
  const d2 = lab.directors[1];
  assert.ok(d2 !== undefined);
  const load = await startLoad(lab.client, `http://${ECMP_VIP}/`, ['--concurrency', '4']);
  const stopping = lab.stopGracefully(d2);
  // The graceful-shutdown community makes the router drop d2's path from the ECMP set before the withdraw.
  await lab.waitNexthops(core('d3'), 30_000);
  const during = await replay(STOP_FLOWS, FIRST_PORT + FLOWS);
  assert.deepEqual(Object.keys(perDirector(during)), ['d3']);
  assert.equal(await stopping, 0);
  const r = await load.stop();
  assert.ok(r.ok > 0);
  t.diagnostic(`requests under load across the stop: ${String(r.ok)} ok, ${String(r.failed)} failed ${JSON.stringify(r.errors)}`);
  // NAT directors keep no shared connection state: a request in flight through d2 at the instant its path
  // left the ECMP set can break (mid-stream on d3). That is at most one per concurrent request; new
  // connections after the change (`during`, above) all succeed.
  assert.ok(r.failed <= 4, `failed ${String(r.failed)} of ${String(r.sent)}: ${JSON.stringify(r.errors)}`);
});

test('a director added back: its next hop returns and it takes flows again, to the same real servers', { timeout: 120_000 }, async () => {
  const d1 = lab.directors[0];
  assert.ok(d1 !== undefined);
  await lab.revive(d1);
  await lab.waitNexthops(core('d1', 'd3'), 60_000);
  const back = await replay();
  const spread = perDirector(back);
  assert.ok((spread.d1 ?? 0) >= 180, `d1 took ${String(spread.d1 ?? 0)} of ${String(FLOWS)}: ${JSON.stringify(spread)}`);
  assert.equal(compare(first, back).otherServer, 0, 'the real server of every flow is unchanged');
});

test('an operator withdraws the VIP from one director (lvsd bgp withdraw): its next hop leaves; a restore brings it back', { timeout: 120_000 }, async () => {
  const d3 = lab.directors[2];
  assert.ok(d3 !== undefined);
  const socket = join(lab.dir, `${d3.name}-lvsd.sock`);
  const out = await d3.ns.exec(process.execPath, [BIN, 'bgp', 'withdraw', `${ECMP_VIP}/32`, '--socket', socket]);
  assert.match(out.stdout, /^192\.0\.2\.10\/32: withdrawn \(by .+\)$/m);
  await lab.waitNexthops(core('d1'), 30_000);
  const held = await replay(100);
  assert.deepEqual(Object.keys(perDirector(held)), ['d1']);
  assert.equal(compare(first, held).otherServer, 0);
  const unknown = await d3.ns.exec(process.execPath, [BIN, 'bgp', 'withdraw', '203.0.113.0/24', '--socket', socket]).then(() => 'exit 0', (e: unknown) => String(e));
  assert.match(unknown, /203\.0\.113\.0\/24 is not in bgp\.announce/);
  const restored = await d3.ns.exec(process.execPath, [BIN, 'bgp', 'restore', `${ECMP_VIP}/32`, '--socket', socket]);
  assert.match(restored.stdout, /^192\.0\.2\.10\/32: announced$/m);
  await lab.waitNexthops(core('d1', 'd3'), 30_000);
});
