// virtual_server_group, virtual_server and real_server → virtualServers.
//
// lvsd has no virtual server groups: `virtual_server group NAME` becomes one lvsd virtual server per
// member address/port or fwmark of the group, each with the same real servers and checks (keepalived
// shared one checker per real server across the group; lvsd checks each copy — same verdicts).
import { readSmtpAlert } from './map-alerts.js';
import { isIP } from 'node:net';
import type { NamedBlock, VirtualServerBlock } from './ast.js';
import type { Pos } from './lexer.js';
import type { Directive } from './parser.js';
import type { HealthCheckOut, Method, RealServerOut, TunnelOut, VirtualServerOut } from './lvsd-shape.js';
import { BlockReader, seconds, type Context } from './reader.js';
import { CHECKERS, mapChecker, mergeTiming, readTiming, type Timing } from './map-checker.js';

const SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos'];
const MAX_GROUP_EXPANSION = 256;

export type GroupMember = { kind: 'ip'; address: string; port: number | undefined; pos: Pos } | { kind: 'fwmark'; mark: number; family?: 'ipv4' | 'ipv6'; pos: Pos };

/** The members of a virtual_server_group, ranges expanded to single addresses. */
export function expandGroup(ctx: Context, g: NamedBlock): GroupMember[] {
  const out: GroupMember[] = [];
  for (const line of g.body) {
    if (line.keyword === 'fwmark') {
      const mark = Number(line.args[0]);
      if (!Number.isInteger(mark) || mark < 1 || mark > 4294967295) {
        ctx.reportDirective(line, `${line.args[0] ?? '(missing)'} is not a fwmark 1..4294967295; not carried over`);
        continue;
      }
      const fam = line.args[1];
      const m: GroupMember = { kind: 'fwmark', mark, pos: line.pos };
      if (fam === 'inet') m.family = 'ipv4';
      else if (fam === 'inet6') m.family = 'ipv6';
      else if (fam !== undefined) ctx.reportDirective(line, `${fam} is not inet or inet6`);
      out.push(m);
      continue;
    }
    const addresses = expandRange(line.keyword);
    if (typeof addresses === 'string') {
      ctx.reportDirective(line, `${addresses}; not carried over`);
      continue;
    }
    const portRaw = line.args[0];
    const port = portRaw === undefined ? undefined : Number(portRaw);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      ctx.reportDirective(line, `${portRaw ?? ''} is not a port; not carried over`);
      continue;
    }
    for (const address of addresses) out.push({ kind: 'ip', address, port, pos: line.pos });
  }
  return out;
}

/** "10.0.0.1", "10.0.0.3-10", "10.0.0.250-10.0.1.10", "10.0.0.8/29", "2001:db8::1-a". */
export function expandRange(spec: string): string[] | string {
  if (isIP(spec) !== 0) return [spec];
  const cidr = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(spec);
  if (cidr) {
    const base = v4ToInt(cidr[1] ?? '');
    const len = Number(cidr[2]);
    if (base === undefined || len > 32) return `${spec} is not an address range`;
    const size = 2 ** (32 - len);
    if (size > MAX_GROUP_EXPANSION) return `${spec} holds ${size} addresses; the importer expands at most ${MAX_GROUP_EXPANSION}`;
    const start = Math.floor(base / size) * size;
    return Array.from({ length: size }, (_, i) => intToV4(start + i));
  }
  const dash = spec.indexOf('-');
  if (dash > 0) {
    const from = spec.slice(0, dash);
    const to = spec.slice(dash + 1);
    if (isIP(from) === 4) {
      const a = v4ToInt(from);
      const b = isIP(to) === 4 ? v4ToInt(to) : /^\d{1,3}$/.test(to) && Number(to) <= 255 && a !== undefined ? a - (a % 256) + Number(to) : undefined;
      if (a === undefined || b === undefined || b < a) return `${spec} is not an address range`;
      if (b - a + 1 > MAX_GROUP_EXPANSION) return `${spec} holds ${b - a + 1} addresses; the importer expands at most ${MAX_GROUP_EXPANSION}`;
      return Array.from({ length: b - a + 1 }, (_, i) => intToV4(a + i));
    }
    if (isIP(from) === 6 && /^[0-9a-fA-F]{1,4}$/.test(to)) {
      const lastColon = from.lastIndexOf(':');
      const head = from.slice(0, lastColon + 1);
      const a = parseInt(from.slice(lastColon + 1) || '0', 16);
      const b = parseInt(to, 16);
      if (b < a) return `${spec} is not an address range`;
      if (b - a + 1 > MAX_GROUP_EXPANSION) return `${spec} holds ${b - a + 1} addresses; the importer expands at most ${MAX_GROUP_EXPANSION}`;
      return Array.from({ length: b - a + 1 }, (_, i) => head + (a + i).toString(16));
    }
  }
  return `${spec} is not an address or address range`;
}

function v4ToInt(s: string): number | undefined {
  if (isIP(s) !== 4) return undefined;
  return s.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

function intToV4(n: number): string {
  return [24, 16, 8, 0].map((sh) => Math.floor(n / 2 ** sh) % 256).join('.');
}

/** lvs_method / lb_kind arguments: NAT | DR | TUN [type ipip|gue port N|gre] [nocsum|csum|remcsum]. */
function parseMethod(ctx: Context, d: Directive): { method: Method; tunnel?: TunnelOut } | undefined {
  const m = d.args[0]?.toUpperCase();
  if (m === 'NAT') return { method: 'nat' };
  if (m === 'DR') return { method: 'dr' };
  if (m !== 'TUN') {
    ctx.reportDirective(d, `${d.args[0] ?? '(missing)'} is not NAT, DR or TUN; not carried over`);
    return undefined;
  }
  const rest = d.args.slice(1);
  if (rest.length === 0) return { method: 'tun' };
  const tunnel: TunnelOut = { type: 'ipip' };
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i];
    if (w === 'type') {
      const t = rest[++i];
      if (t === 'ipip' || t === 'gue' || t === 'gre') tunnel.type = t;
      else ctx.reportDirective(d, `tunnel type ${t ?? '(missing)'} is not ipip, gue or gre`);
    } else if (w === 'port') {
      const p = Number(rest[++i]);
      if (Number.isInteger(p) && p >= 1 && p <= 65535) tunnel.port = p;
      else ctx.reportDirective(d, 'tunnel port is not a port 1..65535');
    } else if (w === 'nocsum') tunnel.checksum = 'none';
    else if (w === 'csum' || w === 'remcsum') tunnel.checksum = w;
    else ctx.reportDirective(d, `unknown tunnel option ${w ?? ''}`);
  }
  return { method: 'tun', tunnel };
}

export interface VsKey {
  address?: string;
  port?: number;
  fwmark?: number;
  family?: 'ipv4' | 'ipv6';
  pos: Pos;
  /** For members of a virtual_server_group: where they came from. */
  group?: string;
}

/** The keys a virtual_server block stands for (one, or one per group member). */
export function virtualServerKeys(ctx: Context, vs: VirtualServerBlock, groups: Map<string, GroupMember[]>): VsKey[] {
  const k = vs.key;
  if (k.kind === 'ip') return [{ address: k.address, ...(k.port === undefined ? {} : { port: k.port }), pos: vs.pos }];
  if (k.kind === 'fwmark') return [{ fwmark: k.mark, pos: vs.pos }];
  const members = groups.get(k.group);
  if (!members) {
    ctx.report(vs.pos, 'virtual_server', `no virtual_server_group ${k.group}; not carried over`);
    return [];
  }
  return members.map((m) =>
    m.kind === 'ip'
      ? { address: m.address, ...(m.port === undefined ? {} : { port: m.port }), pos: m.pos, group: k.group }
      : { fwmark: m.mark, ...(m.family ? { family: m.family } : {}), pos: m.pos, group: k.group },
  );
}

export function mapVirtualServer(ctx: Context, vs: VirtualServerBlock, key: VsKey): VirtualServerOut | undefined {
  const r = new BlockReader(ctx, vs.body, 'virtual_server');

  const protoD = r.last('protocol');
  const proto = (protoD?.args[0] ?? 'TCP').toLowerCase();
  const protocol = proto === 'tcp' || proto === 'udp' || proto === 'sctp' ? proto : undefined;
  if (protoD && protocol === undefined) ctx.reportDirective(protoD, `${protoD.args[0] ?? ''} is not TCP, UDP or SCTP; TCP is used`);

  const methodD = r.last('lvs_method', 'lb_kind');
  const parsedMethod = methodD ? parseMethod(ctx, methodD) : undefined;
  const out: VirtualServerOut = { protocol: protocol ?? 'tcp', method: parsedMethod?.method ?? 'nat', realServers: [] };
  ctx.source.self(out, key.pos);
  if (key.group !== undefined) ctx.note(out, `member of virtual_server_group ${key.group}; settings from the virtual_server at ${ctx.displayPos(vs.pos)}`);
  if (key.address !== undefined) {
    if (isIP(key.address) === 0) {
      r.discard();
      ctx.report(key.pos, 'virtual_server', `${key.address} is not an IP address; not carried over`);
      return undefined;
    }
    out.address = key.address;
    // Without a port: every port (IPVS port 0), which keepalived makes persistent if it is not (below).
    out.port = key.port ?? 0;
    if (out.port === 0) ctx.note(out, 'a virtual server without a port: every port (port 0); only the ipvs dataplane carries it');
  } else if (key.fwmark !== undefined) {
    out.fwmark = key.fwmark;
    // A fwmark service matches packets by mark alone: the kernel (and keepalived) ignore the protocol.
    delete out.protocol;
    const famD = r.last('ip_family');
    const fam = famD?.args[0];
    if (key.family) out.family = key.family;
    else if (fam === 'inet6') out.family = 'ipv6';
    else if (fam === 'inet') out.family = 'ipv4';
    else if (famD) ctx.reportDirective(famD, `${fam ?? '(missing)'} is not inet or inet6`);
  }
  r.ignore('ip_family');
  if (protoD && out.protocol !== undefined) ctx.source.at(out, 'protocol', protoD.pos);
  if (methodD) ctx.source.at(out, 'method', methodD.pos);
  else ctx.note(out, 'keepalived forwards by NAT unless lb_kind/lvs_method says otherwise');

  // Without lb_algo/lvs_sched keepalived uses wlc, which is lvsd's default too: nothing to write.
  const schedD = r.last('lvs_sched', 'lb_algo');
  const sched = schedD?.args[0]?.toLowerCase();
  if (schedD && sched !== undefined && SCHEDULERS.includes(sched)) {
    out.scheduler = sched;
    ctx.source.at(out, 'scheduler', schedD.pos);
  } else if (schedD) ctx.reportDirective(schedD, `${schedD.args[0] ?? '(missing)'} is not an IPVS scheduler; lvsd's default (wlc) is used`);

  const flags = new Set<string>();
  for (const f of ['sh-port', 'sh-fallback', 'mh-port', 'mh-fallback']) if (r.has(f)) flags.add(f);
  // ipvsadm's flag-1/flag-2 are the fallback/port flags of whichever of sh/mh is the scheduler.
  const family = sched === 'mh' ? 'mh' : 'sh';
  if (r.has('flag-1')) flags.add(`${family}-fallback`);
  if (r.has('flag-2')) flags.add(`${family}-port`);
  r.drop('scheduler flag-3 has no meaning for the kernel\'s schedulers', 'flag-3');
  // keepalived (and the kernel) ignore sh-* flags unless the scheduler is sh, mh-* unless it is mh.
  const effective = [...flags].filter((f) => f.startsWith(`${sched ?? 'wlc'}-`));
  for (const f of flags) if (!effective.includes(f)) ctx.note(out, `${f} dropped: keepalived ignores it with scheduler ${sched ?? '(default)'}`);
  if (effective.length > 0) out.schedulerFlags = effective;

  const persistD = r.last('persistence_timeout');
  const granD = r.last('persistence_granularity');
  if (persistD) {
    // keepalived: persistence_timeout without a value is 6 minutes; 0 turns persistence off.
    const value = persistD.args[0] === undefined ? 360 : Number(persistD.args[0]);
    if (!Number.isInteger(value) || value < 0) ctx.reportDirective(persistD, `${persistD.args[0] ?? ''} is not a number of seconds; not carried over`);
    else if (value > 0) {
      out.persistence = { timeout: seconds(value) };
      ctx.source.at(out, 'persistence', persistD.pos);
      const gran = granD?.args[0];
      if (gran !== undefined) out.persistence.netmask = gran;
    }
  }
  if (granD && !out.persistence) ctx.reportDirective(granD, 'persistence_granularity without persistence_timeout has no effect');
  const peD = r.last('persistence_engine');
  if (peD) {
    const pe = peD.args[0];
    if (pe !== 'sip') ctx.reportDirective(peD, `${pe ?? '(missing)'}: the kernel's only persistence engine is sip; not carried over`);
    else if (!out.persistence) ctx.reportDirective(peD, 'a persistence engine without persistence_timeout has no effect; not carried over');
    else out.persistence.engine = pe;
  }
  if (out.port === 0 && !out.persistence) {
    // keepalived 2.2.7: "zero port only valid for persistent services - setting" (its default, 6 minutes).
    out.persistence = { timeout: seconds(360) };
    ctx.note(out, 'persistence 360s added: keepalived makes a virtual server without a port persistent');
  }

  if (r.has('ops')) {
    // keepalived: "one packet scheduling requires UDP - resetting".
    if (out.protocol === 'udp') out.onePacket = true;
    else ctx.note(out, 'ops dropped: keepalived resets one-packet scheduling on non-UDP services');
  }

  const quorumD = r.last('quorum');
  const quorum = r.int(quorumD, 0, 2147483647);
  if (quorumD && quorum !== undefined) {
    out.quorum = quorum;
    ctx.source.at(out, 'quorum', quorumD.pos);
  }
  const hystD = r.last('hysteresis');
  const hyst = r.int(hystD, 0, 2147483647);
  if (hystD && hyst !== undefined) {
    out.hysteresis = hyst;
    ctx.source.at(out, 'hysteresis', hystD.pos);
  }
  const vsInhibitD = r.last('inhibit_on_failure');
  const vsInhibit = vsInhibitD ? r.bool(vsInhibitD) === true : false;
  if (vsInhibit) out.inhibitOnFailure = true;
  const vsAlphaD = r.last('alpha');
  const vsAlpha = vsAlphaD ? r.bool(vsAlphaD) === true : false;
  if (vsAlpha) out.alpha = true;
  if (r.has('omega')) out.omega = true;
  const haSuspendD = r.last('ha_suspend');
  if (haSuspendD) {
    // keepalived 2.2.7 clears it on a fwmark service: "cannot use ha_suspend with fwmarks - clearing ha_suspend".
    if (out.fwmark !== undefined) ctx.note(out, 'ha_suspend dropped: keepalived clears it on a fwmark virtual server');
    else out.haSuspend = true;
  }

  const notify: NonNullable<VirtualServerOut['notify']> = {};
  for (const [kw, k] of [
    ['quorum_up', 'quorumUp'],
    ['quorum_down', 'quorumDown'],
  ] as const) {
    const d = r.last(kw);
    const cmd = r.str(d);
    if (!d || cmd === undefined) continue;
    notify[k] = cmd;
    ctx.source.at(notify, k, d.pos);
    if (d.args.length > 1) ctx.reportDirective(d, 'running as another user is not supported; lvsd runs it as its service user');
  }
  if (Object.keys(notify).length > 0) out.notify = notify;

  const sorryD = r.last('sorry_server');
  if (sorryD) {
    const [addr, portRaw] = sorryD.args;
    if (addr === undefined || isIP(addr) === 0) ctx.reportDirective(sorryD, `${addr ?? '(missing)'} is not an IP address; not carried over`);
    else {
      const sorry: NonNullable<VirtualServerOut['sorryServer']> = { address: addr };
      const port = Number(portRaw);
      if (portRaw !== undefined && Number.isInteger(port) && port >= 1 && port <= 65535) sorry.port = port;
      const smD = r.last('sorry_server_lvs_method');
      const sm = smD ? parseMethod(ctx, smD) : undefined;
      if (sm) sorry.method = sm.method;
      if (sm?.tunnel && smD) ctx.reportDirective(smD, 'tunnel options of the sorry server are not supported; plain ipip is used');
      if (r.has('sorry_server_inhibit')) sorry.inhibit = true;
      ctx.source.self(sorry, sorryD.pos);
      out.sorryServer = sorry;
    }
  }
  // Without a sorry_server they describe nothing (keepalived keeps them unused too).
  r.ignore('sorry_server_inhibit', 'sorry_server_lvs_method');

  const timing = readTiming(r);
  const inhibits: { value: boolean; d: Directive }[] = [];
  for (const rsD of r.all('real_server')) {
    const rs = mapRealServer(ctx, rsD, timing, parsedMethod, { alpha: vsAlpha, portless: out.fwmark !== undefined || out.port === 0 }, inhibits);
    if (rs) out.realServers.push(rs);
  }
  // inhibit_on_failure is per virtual server in lvsd: when every real server asks for it, so does the service.
  const rsCount = vs.body.filter((d) => d.keyword === 'real_server').length;
  const first = inhibits[0];
  if (first && inhibits.length === rsCount && inhibits.every((i) => i.value === first.value)) {
    if (first.value) {
      out.inhibitOnFailure = true;
      ctx.source.at(out, 'inhibitOnFailure', first.d.pos);
    } else delete out.inhibitOnFailure;
  } else {
    for (const i of inhibits) {
      if (i.value !== vsInhibit) ctx.reportDirective(i.d, 'inhibit_on_failure is per virtual server in lvsd and the real servers disagree; this one follows its virtual server');
    }
  }
  hoistHealthCheck(out);
  readSmtpAlert(r, out); // alerts.email.virtualServers (map-alerts.ts)
  r.finish();
  return out;
}

function mapRealServer(
  ctx: Context,
  d: Directive,
  vsTiming: Timing,
  vsMethod: { method: Method; tunnel?: TunnelOut } | undefined,
  vsFlags: { alpha: boolean; portless: boolean },
  inhibits: { value: boolean; d: Directive }[],
): RealServerOut | undefined {
  const r = new BlockReader(ctx, d.block ?? [], 'real_server');
  const [addr, portRaw] = d.args;
  if (addr === undefined || isIP(addr) === 0) {
    r.discard();
    ctx.reportDirective(d, `${addr ?? '(missing)'} is not an IP address; real server not carried over`);
    return undefined;
  }
  const rs: RealServerOut = { address: addr };
  ctx.source.self(rs, d.pos);
  if (portRaw !== undefined) {
    const port = Number(portRaw);
    if (vsFlags.portless) {
      // keepalived ignores real server ports of fwmark and every-port services (packets keep their destination port).
      if (port !== 0) ctx.note(rs, `port ${portRaw} dropped: keepalived ignores real server ports of fwmark and every-port services`);
    } else if (Number.isInteger(port) && port >= 1 && port <= 65535) rs.port = port;
    else if (port !== 0) ctx.reportDirective(d, `${portRaw} is not a port; the virtual server's port is used`);
  }
  const weightD = r.last('weight');
  const weight = r.int(weightD, 0, 65535);
  rs.weight = weight ?? 1;
  if (weightD) ctx.source.at(rs, 'weight', weightD.pos);

  const methodD = r.last('lvs_method', 'lb_kind');
  const method = methodD ? parseMethod(ctx, methodD) : undefined;
  if (method && method.method !== vsMethod?.method) rs.method = method.method;
  const tunnel = method?.tunnel ?? (method ? undefined : vsMethod?.tunnel);
  if (tunnel) rs.tunnel = tunnel;

  const upD = r.last('uthreshold');
  const up = r.int(upD, 0, 2147483647);
  if (up !== undefined && up > 0) rs.upperThreshold = up;
  const lowD = r.last('lthreshold');
  const low = r.int(lowD, 0, 2147483647);
  if (low !== undefined && low > 0) {
    if (rs.upperThreshold !== undefined && low > rs.upperThreshold && lowD) {
      ctx.reportDirective(lowD, `lthreshold ${low} is above uthreshold ${rs.upperThreshold}; not carried over`);
    } else rs.lowerThreshold = low;
  }

  const notify: NonNullable<RealServerOut['notify']> = {};
  for (const [kw, k] of [
    ['notify_up', 'up'],
    ['notify_down', 'down'],
  ] as const) {
    const nd = r.last(kw);
    const cmd = r.str(nd);
    if (!nd || cmd === undefined) continue;
    notify[k] = cmd;
    ctx.source.at(notify, k, nd.pos);
    if (nd.args.length > 1) ctx.reportDirective(nd, 'running as another user is not supported; lvsd runs it as its service user');
  }

  const inhibitD = r.last('inhibit_on_failure');
  const inhibit = r.bool(inhibitD);
  if (inhibitD && inhibit !== undefined) inhibits.push({ value: inhibit, d: inhibitD });
  const alphaD = r.last('alpha');
  if (alphaD && (r.bool(alphaD) ?? vsFlags.alpha) !== vsFlags.alpha) {
    ctx.reportDirective(alphaD, 'alpha is per virtual server in lvsd; this real server follows its virtual server');
  }

  const timing = mergeTiming(vsTiming, readTiming(r));
  // keepalived keeps a real server up only while every checker passes: the first checker becomes
  // healthCheck, the others moreChecks.
  const mapped: HealthCheckOut[] = [];
  for (const c of r.all(...CHECKERS)) for (const hc of mapChecker(ctx, c, timing)) {
    if (vsFlags.portless && hc.connectPort === undefined && ['tcp', 'http', 'https', 'udp', 'dns', 'smtp'].includes(hc.type)) {
      // IPVS ignores real server ports of fwmark and every-port services, but keepalived's checkers still connect to
      // the port written on the real_server line: keep it as the check's port.
      const port = Number(portRaw);
      if (portRaw !== undefined && Number.isInteger(port) && port >= 1 && port <= 65535) {
        hc.connectPort = port;
        ctx.source.at(hc, 'connectPort', d.pos);
      } else {
        ctx.reportDirective(c, 'a fwmark or every-port service\'s real server without a port needs connect_port for this check; the check is not carried over (it counts as passing)');
        continue;
      }
    }
    mapped.push(hc);
  }
  const [first, ...more] = mapped;
  if (first) rs.healthCheck = first;
  if (more.length > 0) rs.moreChecks = more;
  if (Object.keys(notify).length > 0) rs.notify = notify;
  r.finish();
  return rs;
}

/** When every real server has the same checks (usual in keepalived files), write them once on the service. */
export function hoistHealthCheck(vs: VirtualServerOut): void {
  const first = vs.realServers[0]?.healthCheck;
  if (!first) return;
  const json = JSON.stringify(first);
  if (!vs.realServers.every((rs) => rs.healthCheck !== undefined && JSON.stringify(rs.healthCheck) === json)) return;
  vs.healthCheck = first;
  for (const rs of vs.realServers) delete rs.healthCheck;
  // moreChecks too, but only then: a real server's own list replaces the service's whole.
  const firstMore = vs.realServers[0]?.moreChecks;
  if (!firstMore) return;
  const more = JSON.stringify(firstMore);
  if (!vs.realServers.every((rs) => JSON.stringify(rs.moreChecks) === more)) return;
  vs.moreChecks = firstMore;
  for (const rs of vs.realServers) delete rs.moreChecks;
}
