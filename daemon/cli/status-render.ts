// The human view of `lvsd status` and `lvsd top`: the director's snapshot as an operator scans it. The
// virtual server table keeps `ipvsadm -L -n`'s layout column for column (measured from ipvsadm 1.31 on a
// real IPVS kernel: test/fixtures/ipvsadm/L-n.txt), so an eye or a script used to ipvsadm reads it alike;
// lvsd's own knowledge (health, configured weight, overrides, quorum) goes in columns and flags after
// ipvsadm's. Pure: snapshot in, text out.
import type { DirectorSnapshot, Override, RealServerSnapshot, VirtualServerSnapshot } from '../director/snapshot.js';
import type { Counters, ForwardMethod } from '../dataplane/types.js';

export interface RenderOptions {
  /** Add the dataplane's rates per real server (what `lvsd top` shows): CPS, InBPS, OutBPS. */
  rates?: boolean;
}

/** ipvsadm's names of the forwarding methods (its `Forward` column). */
const FORWARD: Record<ForwardMethod, string> = { nat: 'Masq', dr: 'Route', tun: 'Tunnel' };

// ipvsadm: "Prot LocalAddress:Port Scheduler Flags" / "  -> %-28s %-7s %-6d %-10u %-10u".
export const SERVICE_TITLE = 'Prot LocalAddress:Port Scheduler Flags';
const REAL_TITLE = `  -> ${'RemoteAddress:Port'.padEnd(28)} ${'Forward'.padEnd(7)} ${'Weight'.padEnd(6)} ${'ActiveConn'.padEnd(10)} ${'InActConn'.padEnd(10)}`;
const RATE_TITLE = ` ${'CPS'.padStart(8)} ${'InBPS'.padStart(8)} ${'OutBPS'.padStart(8)}`;

function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** "TCP  192.168.77.100:80", "FWM  4": the protocol padded to 4 and one space, as ipvsadm prints it. */
export function serviceLabel(v: VirtualServerSnapshot): string {
  if (v.fwmark !== null) return `FWM  ${v.fwmark}`;
  return `${v.protocol.toUpperCase().padEnd(4)} ${hostPort(v.address ?? '-', v.port ?? 0)}`;
}

function overrideWords(o: Override | null): string[] {
  if (o === null) return [];
  const words = [o.maintenance === true ? 'maintenance' : '', o.drain === true ? 'drained' : '', o.weight !== undefined ? `weight=${o.weight}` : ''].filter(Boolean);
  return words.length > 0 ? [`[override: ${words.join(', ')}]`] : [];
}

/** Large counters in ipvsadm's spirit (its --rate without --exact): 999, 1.5K, 12M. */
export function compact(n: number): string {
  const units: [number, string][] = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'K']];
  for (const [size, unit] of units) {
    if (n >= size) {
      const v = n / size;
      return `${v >= 10 ? Math.round(v) : Math.round(v * 10) / 10}${unit}`;
    }
  }
  return String(Math.round(n));
}

function rateColumns(c: Counters | null): string {
  const f = (n: number | undefined): string => (n === undefined ? '-' : compact(n)).padStart(8);
  return ` ${f(c?.cps)} ${f(c?.inBps)} ${f(c?.outBps)}`;
}

function serviceLine(v: VirtualServerSnapshot, opts: RenderOptions): string {
  const q = v.quorum;
  const flags = [`name ${v.name}`, q.up ? `quorum ${q.liveWeight}/${q.required}` : `quorum LOST ${q.liveWeight}/${q.required}`];
  if (q.sorryServerActive) flags.push('sorry-server');
  if (v.checksSuspended) flags.push('checks suspended (ha_suspend)');
  flags.push(...overrideWords(v.override));
  if (opts.rates === true && v.counters !== null) flags.push(`cps ${compact(v.counters.cps)} in ${compact(v.counters.inBps)}B/s out ${compact(v.counters.outBps)}B/s`);
  return `${serviceLabel(v)} ${v.scheduler}  ${flags.join('  ')}`;
}

/** The Health column: status, the checker's last word, and where lvsd's weight differs from the config. */
function healthText(r: RealServerSnapshot): string {
  const parts = [r.health.status.toUpperCase()];
  if (r.health.lastCheck !== null) parts.push(`${r.health.checker}: ${r.health.lastCheck.result} (${Math.round(r.health.lastCheck.latencyMs)} ms)`);
  else if (r.health.checker !== '') parts.push(r.health.checker);
  if (r.weight.effective === null) parts.push(`out of the table (weight ${r.weight.configured})`);
  else if (r.weight.effective !== r.weight.configured) parts.push(`configured weight ${r.weight.configured}`);
  return [...parts, ...overrideWords(r.override)].join('  ');
}

function realServerLine(r: RealServerSnapshot, opts: RenderOptions): string {
  // A real server out of the table has no kernel weight: ipvsadm would not list it; lvsd shows it with "-".
  const weight = r.weight.effective === null ? '-' : String(r.weight.effective);
  const ipvsadm = `  -> ${hostPort(r.address, r.port).padEnd(28)} ${FORWARD[r.method].padEnd(7)} ${weight.padEnd(6)} ${String(r.connections.active).padEnd(10)} ${String(r.connections.inactive).padEnd(10)}`;
  return `${ipvsadm}${opts.rates === true ? rateColumns(r.counters) : ''} ${healthText(r)}`;
}

/** The virtual server table, `ipvsadm -L -n` style, with lvsd's columns after ipvsadm's. */
export function renderTable(s: DirectorSnapshot, opts: RenderOptions = {}): string[] {
  const out = [SERVICE_TITLE, `${REAL_TITLE}${opts.rates === true ? RATE_TITLE : ''} Health`];
  for (const v of s.virtualServices) {
    out.push(serviceLine(v, opts));
    for (const r of v.realServers) out.push(realServerLine(r, opts));
  }
  return out;
}

/** Who, which dataplane, which config: the three lines above everything. */
export function renderHeader(s: DirectorSnapshot): string[] {
  const reload = s.config.lastReload === null ? '' : ` · last reload ${s.config.lastReload.ok ? 'ok' : 'FAILED'}: ${s.config.lastReload.message}`;
  return [
    `node ${s.node} · lvsd ${s.version} · up since ${s.startedAt}`,
    `dataplane ${s.dataplane.kind} (${s.dataplane.reason})`,
    `config ${s.config.path} (sha256 ${s.config.hash.slice(0, 12)}) · reloads ${s.config.reloads}${reload}`,
  ];
}

/** One line per VRRP instance, and why VRRP is not running when it is not. */
export function renderVrrp(s: DirectorSnapshot): string[] {
  const out = [s.vrrp.length === 0 ? 'VRRP: no instances' : 'VRRP'];
  if (s.vrrpProblem !== null) out.push(`  NOT RUNNING: ${s.vrrpProblem}${s.vrrp.length > 0 ? ' (the roles below are the last it reported)' : ''}`);
  for (const i of s.vrrp) {
    const forced = i.forced === null ? '' : `  [forced: ${i.forced}]`;
    out.push(
      `  ${i.name.padEnd(12)} ${i.state.padEnd(6)} ${i.interface} vrid ${i.vrid} v${i.version}  priority ${i.effectivePriority}/${i.basePriority}  master ${i.masterAddress ?? '-'}  VIPs ${i.vips.join(' ')}${forced}`,
    );
  }
  return out;
}

/** BIRD's BGP sessions and this director's announcements (nothing without a bgp section). */
export function renderBgp(s: DirectorSnapshot): string[] {
  const b = s.bgp;
  if (b === undefined) return [];
  const out = [`BGP (bird at ${b.socket})`];
  if (b.problem !== null) out.push(`  PROBLEM: ${b.problem}`);
  for (const x of b.sessions) out.push(`  session ${x.name.padEnd(12)} ${x.state.padEnd(5)} ${x.info} (since ${x.since})`);
  for (const a of b.announcements) out.push(`  ${a.announced ? 'announced' : 'withdrawn'} ${a.prefix.padEnd(20)} ${a.reason}`);
  return out;
}

/** Everything `lvsd status` prints. */
export function renderSnapshot(s: DirectorSnapshot, opts: RenderOptions = {}): string {
  const bgp = renderBgp(s);
  return [...renderHeader(s), '', ...renderVrrp(s), ...(bgp.length > 0 ? ['', ...bgp] : []), '', ...renderTable(s, opts)].join('\n');
}
