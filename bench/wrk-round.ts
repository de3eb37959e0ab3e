// One wrk round from a lab namespace, bounded, with the lab's state around it: a round that does not end is
// killed and reported as failed (the run goes on), and a round that went wrong says what the lab looked like.
//
// Why the state: a `Connection: close` round once hung and once gave 0 conn/s. Measured cause (issue #19):
// ICMP redirects from the one-armed director, taken by the client during the "direct" baseline, left
// reply-only conntrack entries that captured later DNAT connections' SYN-ACKs; every wrk connection then
// sat in SYN retries (wrk does not reconnect a connection whose connect() never completes). Client port
// exhaustion and TIME_WAIT were the suspects and were measured too: at most 3,836 of 28,232 client ports
// were in TIME_WAIT. So each round records the counters that tell these apart.
import type { Netns } from '../test/support/netns.js';

export interface WrkResult {
  rps: number;
  p99ms: number;
  errors: number;
}

export type WrkOutcome = ({ ok: true } & WrkResult) | { ok: false; reason: string };

export function parseWrk(out: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const unit = p99?.[2] === 'us' ? 0.001 : p99?.[2] === 's' ? 1000 : 1;
  const p99ms = Number(p99?.[1] ?? NaN) * unit;
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const errors = (sock === null ? 0 : sock.slice(1).reduce((n, x) => n + Number(x), 0)) + non2xx;
  return { rps, p99ms, errors };
}

/**
 * p99 of a proxy against the anchor's from the same round (ms), and in how many rounds the proxy's was
 * lower; a round where either failed is left out. Why per round: each round runs the setups back to back,
 * so a pair saw the same machine, while one round's p99 swings 2× with the load (issue #19).
 */
export function pairedP99(xs: { round: number; p99ms: number }[], ys: { round: number; p99ms: number }[]): string {
  const pairs = xs.flatMap((x) => {
    const y = ys.find((r) => r.round === x.round);
    return y === undefined ? [] : [[x.p99ms, y.p99ms] as const];
  });
  const lower = pairs.filter(([x, y]) => x < y).length;
  return `${pairs.map(([x, y]) => `${x.toFixed(1)}/${y.toFixed(1)}`).join(', ')} ms — lower in ${lower} of ${pairs.length}`;
}

function outcome(out: string, err: string, exit: number | string | undefined, durationS: number, graceMs: number): WrkOutcome {
  if (exit === undefined) return { ok: false, reason: `wrk still running ${(durationS + graceMs / 1000).toFixed(0)} s after a ${durationS} s round; killed` };
  if (exit !== 0) return { ok: false, reason: `wrk exited ${String(exit)}: ${err.trim().slice(0, 200)}` };
  const r = parseWrk(out);
  if (!(r.rps > 0)) return { ok: false, reason: `no request completed (${out.trim().split('\n').slice(-3).join('; ')})` };
  return { ok: true, ...r };
}

/**
 * Runs `wrk ARGS` in `ns`; SIGKILLs it `graceMs` after its own duration. wrk's `--timeout` bounds each
 * request's latency record, not the process: it was seen running past its `-d` with every connection stuck.
 */
export function wrkRound(ns: Netns, args: string[], durationS: number, graceMs = 15_000): Promise<WrkOutcome> {
  return new Promise((resolve) => {
    const child = ns.spawn('wrk', args);
    let out = '';
    let err = '';
    let killed = false;
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const limit = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, durationS * 1000 + graceMs);
    child.once('error', (e) => {
      clearTimeout(limit);
      resolve({ ok: false, reason: `wrk did not start: ${e.message}` });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(limit);
      resolve(outcome(out, err, killed ? undefined : (code ?? signal ?? 'unknown'), durationS, graceMs));
    });
  });
}

/** Counters on both sides of the round that tell conntrack trouble, redirects and port exhaustion apart. */
export interface LabState {
  conntrack: number;
  conntrackMax: number;
  /** Sums over CPUs of `conntrack -S`. */
  insertFailed: number;
  invalid: number;
  drop: number;
  /** ICMP redirects the director has sent (/proc/net/snmp). */
  redirectsSent: number;
  /** Client routes learnt from a redirect (`ip route show cache`). */
  redirectedRoutes: string[];
  clientTimeWait: number;
  clientPorts: number;
  /** Director: handshakes completed into a full accept queue, and SYNs dropped at a listener (TcpExt). */
  listenOverflows: number;
  listenDrops: number;
  /** Client: SYNs sent again (TcpExt TCPSynRetrans). A lost SYN costs a 1 s retransmit; wrk's latency does
   *  not see it (it times a request from its first write, after the handshake), its rate does. */
  synRetrans: number;
}

function sumStat(text: string, key: string): number {
  let n = 0;
  for (const m of text.matchAll(new RegExp(`\\b${key}=(\\d+)`, 'g'))) n += Number(m[1]);
  return n;
}

/** A field of /proc/net/snmp or /proc/net/netstat (a header line and a value line per prefix). */
export function snmpField(snmp: string, proto: string, field: string): number {
  const lines = snmp.split('\n').filter((l) => l.startsWith(`${proto}:`));
  const names = lines[0]?.split(/\s+/) ?? [];
  const values = lines[1]?.split(/\s+/) ?? [];
  const i = names.indexOf(field);
  return i < 0 ? NaN : Number(values[i]);
}

/** Destinations of `ip route show cache` entries that a redirect made (each entry: a route line, then "cache …"). */
export function redirected(cache: string): string[] {
  const blocks = cache.split(/\n(?=\S)/);
  return blocks.filter((b) => b.includes('redirected')).map((b) => b.split(' ')[0] ?? b);
}

export async function labState(director: Netns, client: Netns): Promise<LabState> {
  const [ct, stats, snmp, routes, tw, range, dirExt, clientExt] = await Promise.all([
    director.sh('cat /proc/sys/net/netfilter/nf_conntrack_count /proc/sys/net/netfilter/nf_conntrack_max'),
    director.sh('conntrack -S'),
    director.exec('cat', ['/proc/net/snmp']),
    client.sh('ip -4 route show cache'),
    client.sh('ss -Htan state time-wait | wc -l'),
    client.exec('cat', ['/proc/sys/net/ipv4/ip_local_port_range']),
    director.exec('cat', ['/proc/net/netstat']),
    client.exec('cat', ['/proc/net/netstat']),
  ]);
  const [count = NaN, max = NaN] = ct.stdout.trim().split(/\s+/).map(Number);
  const [lo = 0, hi = 0] = range.stdout.trim().split(/\s+/).map(Number);
  return {
    conntrack: count,
    conntrackMax: max,
    insertFailed: sumStat(stats.stdout, 'insert_failed'),
    invalid: sumStat(stats.stdout, 'invalid'),
    drop: sumStat(stats.stdout, 'drop'),
    redirectsSent: snmpField(snmp.stdout, 'Icmp', 'OutRedirects'),
    redirectedRoutes: redirected(routes.stdout),
    clientTimeWait: Number(tw.stdout.trim()),
    clientPorts: hi - lo + 1,
    listenOverflows: snmpField(dirExt.stdout, 'TcpExt', 'ListenOverflows'),
    listenDrops: snmpField(dirExt.stdout, 'TcpExt', 'ListenDrops'),
    synRetrans: snmpField(clientExt.stdout, 'TcpExt', 'TCPSynRetrans'),
  };
}

/** What changed over a round, in words; empty when nothing points at the lab. */
export function labTrouble(before: LabState, after: LabState): string[] {
  const out: string[] = [];
  if (after.insertFailed > before.insertFailed) out.push(`${after.insertFailed - before.insertFailed} conntrack insert failures (tuple clash)`);
  if (after.invalid > before.invalid) out.push(`${after.invalid - before.invalid} packets conntrack called invalid (it saw one direction only?)`);
  if (after.drop > before.drop) out.push(`${after.drop - before.drop} packets dropped by conntrack`);
  if (after.redirectsSent > before.redirectsSent) out.push(`director sent ${after.redirectsSent - before.redirectsSent} ICMP redirects`);
  if (after.redirectedRoutes.length > 0) out.push(`client routes learnt from redirects: ${after.redirectedRoutes.join(', ')}`);
  if (after.conntrack > 0.9 * after.conntrackMax) out.push(`conntrack table ${after.conntrack}/${after.conntrackMax}`);
  if (after.clientTimeWait > 0.5 * after.clientPorts) out.push(`client ports in TIME_WAIT ${after.clientTimeWait}/${after.clientPorts}`);
  if (after.listenOverflows > before.listenOverflows) out.push(`${after.listenOverflows - before.listenOverflows} handshakes found the director's accept queue full`);
  if (after.listenDrops > before.listenDrops) out.push(`${after.listenDrops - before.listenDrops} SYNs dropped at the director's listeners`);
  if (after.synRetrans > before.synRetrans) out.push(`client sent ${after.synRetrans - before.synRetrans} SYNs again (1 s each, outside wrk's latency)`);
  return out;
}

export function describeState(s: LabState): string {
  return `director conntrack ${s.conntrack}/${s.conntrackMax}, client TIME_WAIT ${s.clientTimeWait}/${s.clientPorts} ports`;
}
