// Runs INSIDE the guest: the active-active lab (test/support/ecmp-lab.ts) on a real IPVS kernel. A BIRD router
// with ECMP on the 5-tuple, three directors each running lvsd (IPVS, DR, mh with mh-port and mh-fallback, the
// sync daemon in both roles unless `sync: false`) and its own BIRD, three real servers (a line echo server on
// 7000 that names itself), a client. Shared by the guest test (guest/ecmp.ts) and the benchmark
// (bench/ecmp-guest.ts, which runs it again without the sync daemon as the control).
//
// Which director a flow takes is the router's own answer (`ip route get … ipproto tcp sport P dport 7000`: the
// kernel's multipath hash, one batch), checked against the directors' IPVS counters; which real server took it
// is the echo's first word. Steps: the fixed flows replayed; 30 long-lived connections and a new connection
// every 250 ms from then on; director d1 crashes (link down, lvsd and BIRD SIGKILLed) and the flows are
// replayed; then (unless `gracefulStop: false`) d2 stops gracefully (SIGTERM) and the flows are replayed again.
// Nothing is asserted here: the figures are returned.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { LVSD_BUNDLE } from '../bundle-path.js';
import { createEcmpLab, ECMP_VIP, type EcmpLab } from '../../support/ecmp-lab.js';
import type { Netns } from '../../support/netns.js';

const here = new URL('.', import.meta.url).pathname;
const FLOW_PROBE = join(here, '..', '..', 'support', 'flow-probe.js');
const FIRST_PORT = 42_000;
const PORT = 7000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
// Every program start in the TCG guest on a loaded host can take many seconds: far more than Netns's 30 s default.
const SLOW = { timeoutMs: 180_000 };

export interface EcmpOptions {
  /** The sync daemon in both roles on every director (default true); false is the benchmark's control. */
  sync?: boolean;
  gracefulStop?: boolean;
  flows?: number;
  long?: number;
  log?: (line: string) => void;
}

/** The client's account of one window of time. */
export interface ClientWindow {
  /** Long-lived connections that broke (reset, closed, or no answer) in the window. */
  broken: number;
  newTotal: number;
  newFailed: number;
  newErrors: Record<string, number>;
  /** The longest gap between two answers on one long-lived connection, among gaps that ended in the window. */
  longestGapMs: number;
}

export interface Replay {
  /** Client ports whose flow got no answer, with the error. */
  failed: Record<string, string>;
  /** Client ports whose flow reached another real server than in the first replay. */
  otherServer: number[];
}

export interface EcmpFigures {
  sync: boolean;
  flows: number;
  long: number;
  nexthops: string[];
  table: string;
  daemons: string;
  /** The first replay: flows per director as the directors' IPVS Conns counters say, and as the router's hash says. */
  counted: Record<string, number>;
  predicted: Record<string, number>;
  perRealServer: Record<string, number>;
  first: Replay;
  /** Established connections to the VIP in each director's IPVS table before the crash (its own and synced). */
  held: Record<string, number>;
  /** The long-lived connections per director, by the router's hash of their source ports. */
  longVia: Record<string, number>;
  /** The crash → the router's route without d1 (polled every 100 ms). */
  withdrawMs: number;
  /** Of the fixed flows: d1's before the crash, and how many the router sends elsewhere after it. */
  ofD1: number;
  moved: number;
  afterCrash: Replay;
  stop?: { exit: number | null; withdrawMs: number; replay: Replay };
  client: { total: number; crashGap: ClientWindow; crashAfter: ClientWindow; crash: ClientWindow; stop?: ClientWindow; multiServer: number };
}

function count(m: Map<number, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of m.values()) out[v] = (out[v] ?? 0) + 1;
  return out;
}

async function serviceConns(ns: Netns): Promise<number> {
  const { stdout } = await ns.exec('ipvsadm', ['-Ln', '--stats', '-t', `${ECMP_VIP}:${String(PORT)}`], SLOW);
  const n = Number(stdout.split('\n').find((l) => l.startsWith('TCP'))?.trim().split(/\s+/)[2]);
  if (!Number.isFinite(n)) throw new Error(`no Conns counter for ${ECMP_VIP}:${String(PORT)} in:\n${stdout}`);
  return n;
}

async function establishedTo(ns: Netns): Promise<number> {
  const { stdout } = await ns.exec('ipvsadm', ['-Lnc'], SLOW);
  return stdout.split('\n').filter((l) => l.includes('ESTABLISHED') && l.includes(`${ECMP_VIP}:${String(PORT)}`)).length;
}

async function waitUntil(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond().catch(() => false)) return Date.now();
    if (Date.now() > end) throw new Error(`timed out after ${String(timeoutMs)} ms waiting for ${what}`);
    await sleep(200);
  }
}

async function startEcho(host: Netns, name: string, procs: ChildProcess[]): Promise<{ stop: () => Promise<void> }> {
  const echo = host.spawn('node', [join(here, 'echo-server.js'), name, String(PORT)]);
  procs.push(echo);
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => { reject(new Error(`${name}: echo server did not start`)); }, 120_000);
    echo.stdout?.once('data', () => { clearTimeout(t); resolve(); });
  });
  return { stop: () => { echo.kill('SIGKILL'); return Promise.resolve(); } };
}

export async function runEcmp(opts: EcmpOptions = {}): Promise<EcmpFigures> {
  const sync = opts.sync ?? true;
  const FLOWS = opts.flows ?? 240;
  const LONG = opts.long ?? 30;
  const log = opts.log ?? ((): void => undefined);
  const procs: ChildProcess[] = [];
  const t0 = Date.now();
  const lab: EcmpLab = await createEcmpLab(sync ? 'ecmp-g' : 'ecmp-n', { dataplane: 'ipvs', ipvsSync: sync, lvsdBin: LVSD_BUNDLE, ports: [PORT], startRealServer: (h, n) => startEcho(h, n, procs) });
  try {
    const director = (name: string): EcmpLab['directors'][number] => lab.directors.find((x) => x.name === name) ?? assert.fail(`no ${name}`);
    const cores = (...names: string[]): string[] => names.map((n) => director(n).core);
    const nameOf = (core: string): string => lab.directors.find((d) => d.core === core)?.name ?? core;
    const ports = Array.from({ length: FLOWS }, (_, i) => FIRST_PORT + i);

    /** Which director the router sends each client port's flow to: the kernel's own multipath hash. */
    const routerChoice = async (sports: number[]): Promise<Map<number, string>> => {
      const file = join(lab.dir, 'route-get.batch');
      writeFileSync(file, sports.map((p) => `route get ${ECMP_VIP} from 10.70.0.1 iif eth1 ipproto tcp sport ${String(p)} dport ${String(PORT)}\n`).join(''));
      const { stdout } = await lab.router.exec('ip', ['-j', '-b', file], SLOW);
      const answers = stdout.trim().split('\n').map((line) => (JSON.parse(line) as { gateway?: string }[])[0]?.gateway ?? '?');
      assert.equal(answers.length, sports.length, stdout.slice(0, 500));
      return new Map(sports.map((p, i) => [p, nameOf(answers[i] ?? '?')]));
    };
    let firstServers = new Map<number, string>();
    /** Replays the fixed flows; the real server that answered each, compared with the first replay. */
    const replay = async (): Promise<{ replay: Replay; servers: Map<number, string> }> => {
      const { stdout } = await lab.client.exec('node', [FLOW_PROBE, ECMP_VIP, String(PORT), String(FIRST_PORT), String(FIRST_PORT + FLOWS - 1), 'echo'], { timeoutMs: 300_000 });
      const answers = Object.entries(JSON.parse(stdout) as Record<string, string>);
      const servers = new Map(answers.filter(([, a]) => !a.startsWith('error')).map(([p, a]) => [Number(p), a.split(' ')[0] ?? '']));
      return {
        servers,
        replay: {
          failed: Object.fromEntries(answers.filter(([, a]) => a.startsWith('error'))),
          otherServer: [...servers].filter(([p, s]) => firstServers.has(p) && firstServers.get(p) !== s).map(([p]) => p),
        },
      };
    };

    await lab.client.sh(`sysctl -qw net.ipv4.ip_local_reserved_ports=${String(FIRST_PORT)}-${String(FIRST_PORT + FLOWS - 1)}`, SLOW.timeoutMs);
    log(`topology up in ${String(Date.now() - t0)} ms`);
    await Promise.all(lab.directors.map((d) => lab.startDirector(d)));
    log(`directors running after ${String(Date.now() - t0)} ms`);
    await lab.waitNexthops(cores('d1', 'd2', 'd3'), 180_000);
    for (const d of lab.directors) {
      await waitUntil(`${d.name}: the virtual server with three real servers of weight 1${sync ? ', and both sync daemons' : ''}`, async () => {
        const table = (await d.ns.exec('ipvsadm', ['-Ln'], SLOW)).stdout;
        const daemons = (await d.ns.exec('ipvsadm', ['-L', '--daemon'], SLOW)).stdout;
        return (table.match(/-> 10\.72\.0\.1[123]:7000\s+Route\s+1\s/g) ?? []).length === 3 && (!sync || (/master sync daemon/.test(daemons) && /backup sync daemon/.test(daemons)));
      }, 120_000);
    }
    const table = (await director('d1').ns.exec('ipvsadm', ['-Ln'], SLOW)).stdout;
    const daemons = (await director('d2').ns.exec('ipvsadm', ['-L', '--daemon'], SLOW)).stdout.trim().replace(/\n/g, '; ');
    const nexthops = await lab.nexthops();
    log(`settled after ${String(Date.now() - t0)} ms`);

    const conns0 = await Promise.all(lab.directors.map((d) => serviceConns(d.ns)));
    const first = await replay();
    firstServers = first.servers;
    const routeBefore = await routerChoice(ports);
    const predicted = count(routeBefore);
    // The counters are summed every 2 s: wait until they hold every answered flow.
    let counted: Record<string, number> = {};
    await waitUntil('the directors\' Conns counters to hold every replayed flow', async () => {
      const now = await Promise.all(lab.directors.map((d) => serviceConns(d.ns)));
      counted = Object.fromEntries(lab.directors.map((d, i) => [d.name, (now[i] ?? 0) - (conns0[i] ?? 0)]));
      return Object.values(counted).reduce((a, b) => a + b, 0) >= FLOWS;
    }, 20_000).catch(() => undefined);

    const child = lab.client.spawn('node', [join(here, 'conn-client.js'), ECMP_VIP, String(PORT), String(LONG), '300', '250']);
    procs.push(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await waitUntil('the client', () => Promise.resolve(out.includes('started')), 120_000);
    // With sync in both roles each director holds every long-lived connection, its own and the others' (synced).
    const held: Record<string, number> = {};
    const want = sync ? LONG : 1;
    for (const d of lab.directors) await waitUntil(`${d.name} to hold ${String(want)} connections`, async () => (held[d.name] = await establishedTo(d.ns)) >= want, 60_000).catch(() => undefined);
    if (!sync) await sleep(3000);
    // Columns without the state: Recv-Q Send-Q Local:Port Peer:Port.
    // (A figure only: when the guest is too slow to answer, it is left empty.)
    const longVia = await (async () => {
      const ss = (await lab.client.exec('ss', ['-Htn', 'state', 'established', 'dst', `${ECMP_VIP}:${String(PORT)}`], SLOW)).stdout;
      const sports = ss.trim().split('\n').map((line) => Number(line.trim().split(/\s+/)[2]?.split(':').pop())).filter((p) => Number.isFinite(p) && p > 0);
      return count(await routerChoice(sports));
    })().catch((e: unknown) => { log(`long-lived connections per director not known: ${String(e)}`); return {}; });
    await sleep(2000);

    log(`crashing d1 (long-lived connections per director: ${JSON.stringify(longVia)})`);
    const crashAt = Date.now();
    await lab.crash(director('d1'));
    await lab.waitNexthops(cores('d2', 'd3'), 60_000);
    const withdrawnAt = Date.now();
    log(`d1's next hop gone after ${String(withdrawnAt - crashAt)} ms`);
    const afterCrash = await replay();
    const routeAfter = await routerChoice(ports);
    const ofD1 = ports.filter((p) => routeBefore.get(p) === 'd1').length;
    const moved = ports.filter((p) => routeBefore.get(p) !== routeAfter.get(p)).length;
    await sleep(5000);

    let stop: EcmpFigures['stop'];
    let stopAt = Date.now();
    if (opts.gracefulStop ?? true) {
      stopAt = Date.now();
      const stopping = lab.stopGracefully(director('d2'));
      await lab.waitNexthops(cores('d3'), 60_000);
      const goneAt = Date.now();
      const exit = await stopping;
      await sleep(5000);
      stop = { exit, withdrawMs: goneAt - stopAt, replay: (await replay()).replay };
    }

    const ended = new Promise<void>((r) => child.once('exit', () => { r(); }));
    child.kill('SIGTERM');
    await Promise.race([ended, sleep(30_000)]);
    const endAt = Date.now();
    const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
      conns: { alive: boolean; dead: string | null; deadAt: number | null; servers: string[] }[];
      fresh: { at: number; ok: boolean; error?: string }[];
      gaps: { at: number; ms: number }[];
    };
    const window = (from: number, to: number): ClientWindow => {
      const fresh = r.fresh.filter((f) => f.at >= from && f.at < to);
      const newErrors: Record<string, number> = {};
      for (const f of fresh) if (!f.ok) newErrors[f.error ?? '?'] = (newErrors[f.error ?? '?'] ?? 0) + 1;
      return {
        broken: r.conns.filter((x) => !x.alive && x.deadAt !== null && x.deadAt >= from && x.deadAt < to).length,
        newTotal: fresh.length,
        newFailed: fresh.filter((f) => !f.ok).length,
        newErrors,
        longestGapMs: Math.max(0, ...r.gaps.filter((g) => g.at >= from && g.at < to).map((g) => g.ms)),
      };
    };
    return {
      sync, flows: FLOWS, long: LONG, nexthops, table, daemons, counted, predicted, perRealServer: count(first.servers), first: first.replay,
      held, longVia, withdrawMs: withdrawnAt - crashAt, ofD1, moved, afterCrash: afterCrash.replay,
      ...(stop === undefined ? {} : { stop }),
      client: {
        total: r.conns.length,
        crashGap: window(crashAt, withdrawnAt),
        crashAfter: window(withdrawnAt, stopAt),
        crash: window(crashAt, stopAt),
        ...(stop === undefined ? {} : { stop: window(stopAt, endAt + 1) }),
        multiServer: r.conns.filter((x) => x.servers.length > 1).length,
      },
    };
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await lab.destroy();
  }
}
