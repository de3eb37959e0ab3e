// Rules that span fields or objects, which a JSON Schema cannot say: duplicate VRIDs and
// services, v2-only / v3-only options, names that must refer to something, forwarding methods
// that cannot map ports, scheduler flags of another scheduler. Runs on a document that already
// passed the schema; returns every problem with its path.
import { normalizeRoutes, normalizeRules } from '../vrrp/virtual-routes.js';
import { normalizeStatics } from '../vrrp/options.js';
import { bodyRegexProblems, type BodyRegexPage } from '../health/checkers/body-regex.js';
import { checkAlerts } from './alerts.js';
import { checkCluster } from './cluster.js';
import { checkBgp, type VirtualServerRef } from './bgp.js';
import { ipFamily, parseCidr, parseDuration, type AddressFamily } from './formats.js';
import type { ConfigFile, HealthCheckFile } from './schema.js';
import type { Issue, PathSegment } from './errors.js';

export interface SemanticResult {
  errors: Issue[];
  warnings: Issue[];
}

type P = PathSegment[];

function vipAddress(v: string | { address: string }): string {
  return typeof v === 'string' ? v : v.address;
}

/** Canonical service key, as normalise.ts builds it. */
export function serviceKey(protocol: string, address: string, port: number): string {
  const fam = ipFamily(address);
  return `${protocol}:${fam === 6 ? `[${address}]` : address}:${port}`;
}

export function realServerKey(address: string, port: number): string {
  return ipFamily(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}

function familyName(f: AddressFamily): string {
  return f === 4 ? 'IPv4' : 'IPv6';
}

/** A contiguous IPv4 netmask ("255.255.255.0"). */
function isIpv4Netmask(s: string): boolean {
  if (ipFamily(s) !== 4) return false;
  const n = s.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const inv = (~n >>> 0) + 1; // a contiguous mask's inverse + 1 is a power of two
  return (inv & (inv - 1)) === 0;
}

/** IPv4: 224.0.0.0/4; IPv6: link-local scope ff02::/16 (keepalived warns for other IPv6 scopes; adverts never leave the link). */
export function isMulticast(a: string, family: 4 | 6): boolean {
  if (ipFamily(a) !== family) return false;
  if (family === 4) return Number(a.split('.')[0]) >= 224 && Number(a.split('.')[0]) <= 239;
  return /^ff02:/i.test(a);
}

export function checkSemantics(cfg: ConfigFile): SemanticResult {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const err = (path: P, message: string, at?: 'key'): void => {
    errors.push(at ? { path, message, at } : { path, message });
  };

  // ---- VRRP -------------------------------------------------------------------------------
  const scripts = cfg.vrrp?.scripts ?? {};
  const instances = cfg.vrrp?.instances ?? [];
  const instanceByName = new Map<string, number>();
  const vridOwner = new Map<string, string>();
  /** VIP address → the instance that holds it (a VIP floats with exactly one instance). */
  const allVips = new Map<string, string>();

  for (const [name, p] of Object.entries(cfg.vrrp?.processes ?? {})) {
    if (p.quorumMax !== undefined && p.quorumMax < (p.quorum ?? 1)) err(['vrrp', 'processes', name, 'quorumMax'], `${p.quorumMax} is below quorum (${p.quorum ?? 1}): the tracker could never be OK`);
  }
  // The engine's own checks of the static addresses, routes and rules, placed at their FILE:LINE:COL.
  normalizeStatics(
    {
      staticIpaddresses: (cfg.vrrp?.staticIpaddresses ?? []).map((v) => (typeof v === 'string' ? { address: v, dev: '' } : { ...v, dev: v.dev ?? '' })),
      staticRoutes: cfg.vrrp?.staticRoutes ?? [],
      staticRules: cfg.vrrp?.staticRules ?? [],
    },
    (field, msg) => {
      const m = /^(\w+)\[(\d+)\](?:\.(\w+))?$/.exec(field);
      err(m === null ? ['vrrp'] : ['vrrp', m[1] ?? '', Number(m[2]), ...(m[3] === undefined ? [] : [m[3]])], msg);
    },
  );
  for (const [name, d] of Object.entries(cfg.vrrp?.interfaceUpDownDelays ?? {})) {
    for (const k of ['down', 'up'] as const) {
      const v = d[k];
      // keepalived reads each as a timer of at most 255 s.
      if (v !== undefined && (parseDuration(v) ?? 0) > 255_000) err(['vrrp', 'interfaceUpDownDelays', name, k], 'must be at most 255s');
    }
  }
  for (const [name, s] of Object.entries(scripts)) {
    const iv = parseDuration(s.interval ?? 1) ?? 0;
    if (iv === 0) err(['vrrp', 'scripts', name, 'interval'], 'must be more than 0');
    if (s.timeout !== undefined && (parseDuration(s.timeout) ?? 0) === 0) err(['vrrp', 'scripts', name, 'timeout'], 'must be more than 0');
  }

  // keepalived skips a vrrp_mcast_group4/6 that is not a multicast address of its family; lvsd refuses it.
  const g4 = cfg.vrrp?.multicastGroup4;
  if (g4 !== undefined && !isMulticast(g4, 4)) err(['vrrp', 'multicastGroup4'], `${g4} is not an IPv4 multicast address (224.0.0.0/4)`);
  const g6 = cfg.vrrp?.multicastGroup6;
  if (g6 !== undefined && !isMulticast(g6, 6)) err(['vrrp', 'multicastGroup6'], `${g6} is not an IPv6 link-local multicast address (ff02::/16)`);
  // keepalived warns and drops a garp_group without a gap or an interface named twice; lvsd refuses them.
  const garpOwner = new Map<string, number>();
  let garpOthers: number | undefined;
  (cfg.vrrp?.garpGroups ?? []).forEach((g, i) => {
    if ((parseDuration(g.interval ?? 0) ?? 0) === 0 && (parseDuration(g.naInterval ?? 0) ?? 0) === 0) err(['vrrp', 'garpGroups', i], 'neither interval nor naInterval is set: the group would pace nothing');
    if (g.interfaces === undefined) {
      if (garpOthers !== undefined) err(['vrrp', 'garpGroups', i], `vrrp.garpGroups[${garpOthers}] already covers every interface no group lists (one group without interfaces at most)`);
      garpOthers ??= i;
    }
    g.interfaces?.forEach((n, j) => {
      const o = garpOwner.get(n);
      if (o !== undefined) err(['vrrp', 'garpGroups', i, 'interfaces', j], `${n} is in vrrp.garpGroups[${o}] already`);
      else garpOwner.set(n, i);
    });
  });

  const vmacOwner = new Map<string, string>();
  instances.forEach((inst, i) => {
    const at = (...rest: P): P => ['vrrp', 'instances', i, ...rest];
    const prev = instanceByName.get(inst.name);
    if (prev !== undefined) err(at('name'), `duplicate instance name "${inst.name}" (also vrrp.instances[${prev}])`);
    else instanceByName.set(inst.name, i);

    const version = inst.version ?? 3;
    // Family: every VIP of one instance has the same family (one VRRP packet carries one family).
    let firstFamily: AddressFamily | undefined;
    // Excluded addresses (not advertised) may be of either family, but belong to one instance like VIPs.
    for (const key of ['virtualIpaddresses', 'virtualIpaddressesExcluded'] as const) {
      (inst[key] ?? []).forEach((v, j) => {
        const c = parseCidr(vipAddress(v));
        if (!c) return;
        const vipPath = typeof v === 'string' ? at(key, j) : at(key, j, 'address');
        const holder = allVips.get(c.address);
        if (holder !== undefined) err(vipPath, holder === inst.name ? `VIP ${c.address} is listed twice` : `VIP ${c.address} is also in instance "${holder}"; a VIP belongs to one instance`);
        else allVips.set(c.address, inst.name);
        if (typeof v !== 'string') {
          const peer = v.peer === undefined ? undefined : parseCidr(v.peer);
          if (peer !== undefined && peer.family !== c.family) err(at(key, j, 'peer'), `peer ${v.peer ?? ''} is ${familyName(peer.family)}, the address ${familyName(c.family)}`);
          if (v.broadcast !== undefined && c.family !== 4) err(at(key, j, 'broadcast'), 'a broadcast address is for IPv4 addresses only');
        }
        if (key === 'virtualIpaddressesExcluded') return;
        if (firstFamily === undefined) firstFamily = c.family;
        else if (c.family !== firstFamily) err(vipPath, `${familyName(c.family)} VIP in an instance whose first VIP is ${familyName(firstFamily)}; use one instance per address family`);
      });
    }
    // keepalived 2.2.7 refuses a v3 instance without a VIP ("No VIP specified; at least one is required"); v2 may have none.
    if ((inst.virtualIpaddresses ?? []).length === 0 && version === 3) {
      err(inst.virtualIpaddresses === undefined ? at() : at('virtualIpaddresses'), 'a version 3 instance needs at least one address in virtualIpaddresses (only version: 2 instances may have none, as in keepalived)');
    }
    const unicast = inst.unicastSrcIp ?? inst.unicastPeers?.[0];
    const family: AddressFamily = firstFamily ?? (unicast !== undefined ? (ipFamily(unicast) ?? 4) : 4);

    if (version === 2 && family === 6) err(at('version'), 'VRRPv2 is IPv4 only (RFC 3768); use version: 3 for IPv6 VIPs');

    const key = `${inst.interface}/${familyName(family)}/${inst.virtualRouterId}`;
    const owner = vridOwner.get(key);
    if (owner !== undefined)
      err(at('virtualRouterId'), `virtualRouterId ${inst.virtualRouterId} is already used by instance "${owner}" on ${inst.interface} (${familyName(family)})`);
    else vridOwner.set(key, inst.name);

    const intervalMs = parseDuration(inst.advertInterval ?? 1) ?? 1000;
    if (version === 2) {
      if (intervalMs % 1000 !== 0 || intervalMs < 1000 || intervalMs > 255_000)
        err(at('advertInterval'), `VRRPv2 advertInterval must be whole seconds 1s..255s (sub-second intervals need version: 3), got ${intervalMs}ms`);
    } else {
      if (inst.authentication) err(at('authentication'), 'authentication is VRRPv2 only (RFC 5798 removed it); remove it or use version: 2', 'key');
      if (intervalMs < 10 || intervalMs > 40_950 || intervalMs % 10 !== 0)
        err(at('advertInterval'), `VRRPv3 advertInterval must be 10ms..40.95s in steps of 10ms, got ${intervalMs}ms`);
    }

    if (inst.priority === 255 && (inst.state ?? 'BACKUP') === 'BACKUP')
      warnings.push({ path: at('priority'), message: 'priority 255 means address owner; it will become MASTER at once regardless of state: BACKUP' });

    if (inst.trackSrcIp === true && inst.unicastSrcIp === undefined) err(at('trackSrcIp'), 'needs unicastSrcIp: track_src_ip tracks the configured source address');
    if (inst.unicastSrcIp !== undefined && ipFamily(inst.unicastSrcIp) !== family)
      err(at('unicastSrcIp'), `${inst.unicastSrcIp} is ${familyName(ipFamily(inst.unicastSrcIp) ?? 4)}, but the instance's VIPs are ${familyName(family)}`);
    // keepalived: "Cannot use unicast_ttl without unicast peers".
    if (inst.unicastTtl !== undefined && (inst.unicastPeers ?? []).length === 0) err(at('unicastTtl'), 'unicastTtl needs unicastPeers (multicast adverts always go out with TTL 255)');
    const peers = new Set<string>();
    (inst.unicastPeers ?? []).forEach((p, j) => {
      if (ipFamily(p) !== family) err(at('unicastPeers', j), `peer ${p} is ${familyName(ipFamily(p) ?? 4)}, but the instance's VIPs are ${familyName(family)}`);
      if (peers.has(p)) err(at('unicastPeers', j), `peer ${p} listed twice`);
      if (p === inst.unicastSrcIp) err(at('unicastPeers', j), `peer ${p} is this director's own unicastSrcIp`);
      peers.add(p);
    });

    // The engine's own checks of virtual routes and rules, placed at their FILE:LINE:COL.
    const routeErr = (field: string, msg: string): void => {
      const m = /^(virtualRoutes|virtualRules)\[(\d+)\](?:\.(\w+))?$/.exec(field);
      err(m === null ? at() : m[3] === undefined ? at(m[1] ?? '', Number(m[2])) : at(m[1] ?? '', Number(m[2]), m[3]), msg);
    };
    normalizeRoutes(inst.virtualRoutes ?? [], routeErr);
    normalizeRules(inst.virtualRules ?? [], routeErr);
    const g = inst.multicastGroup;
    const gFamily = firstFamily ?? 4;
    if (g !== undefined && !isMulticast(g, gFamily)) err(at('multicastGroup'), `${g} is not an ${familyName(gFamily)} ${gFamily === 6 ? 'link-local multicast address (ff02::/16)' : 'multicast address (224.0.0.0/4)'} like the instance's VIPs`);
    if (inst.vmac !== undefined && inst.ipvlan !== undefined) err(at('ipvlan'), 'an instance runs on a vmac or an ipvlan, not both (keepalived: use_vmac or use_ipvlan)');
    if (inst.ipvlan !== undefined) {
      const a = inst.ipvlan.address === undefined ? undefined : parseCidr(inst.ipvlan.address);
      if (inst.ipvlan.address !== undefined && !a) err(at('ipvlan', 'address'), `${inst.ipvlan.address} is not an address or address/prefix`);
      else if (a && firstFamily !== undefined && a.family !== firstFamily) err(at('ipvlan', 'address'), `${familyName(a.family)} address in an instance whose VIPs are ${familyName(firstFamily)}`);
      else if (!a && firstFamily !== 6) err(at('ipvlan'), 'an IPv4 instance on an ipvlan needs ipvlan.address, its adverts\' source (keepalived 2.2.7 keeps it in FAULT without: "IPv4 ipvlan requires a source ip address")');
    }
    const link = inst.vmac ?? inst.ipvlan;
    const linkKey = inst.vmac !== undefined ? 'vmac' : 'ipvlan';
    if (link !== undefined) {
      // One macvlan per instance: two instances cannot share a virtual MAC interface (keepalived names them by VRID).
      const vmacName = link.name ?? `vrrp.${inst.virtualRouterId}`;
      const vmacPath = link.name === undefined ? at(linkKey) : at(linkKey, 'name');
      const holder = vmacOwner.get(vmacName);
      if (holder !== undefined) err(vmacPath, `virtual MAC interface ${vmacName} is already the one of instance "${holder}"; give one of them vmac.name`);
      else vmacOwner.set(vmacName, inst.name);
      if (vmacName === inst.interface) err(vmacPath, `the virtual MAC interface cannot be the instance's own interface ${inst.interface}`);
    }

    (inst.trackScripts ?? []).forEach((t, j) => {
      if (!(t.name in scripts)) {
        const known = Object.keys(scripts);
        err(at('trackScripts', j, 'name'), `unknown script "${t.name}"${known.length ? ` (vrrp.scripts has: ${known.join(', ')})` : ' (vrrp.scripts is empty)'}`);
      }
    });
    const processes = cfg.vrrp?.processes ?? {};
    (inst.trackProcesses ?? []).forEach((t, j) => {
      if (!(t.name in processes)) {
        const known = Object.keys(processes);
        err(at('trackProcesses', j, 'name'), `unknown process tracker "${t.name}"${known.length ? ` (vrrp.processes has: ${known.join(', ')})` : ' (vrrp.processes is empty)'}`);
      }
    });
    const tracked = new Set<string>();
    (inst.trackInterfaces ?? []).forEach((t, j) => {
      if (tracked.has(t.name)) err(at('trackInterfaces', j, 'name'), `interface ${t.name} tracked twice`);
      tracked.add(t.name);
    });
  });

  const groupOf = new Map<string, string>();
  const groupNames = new Set<string>();
  (cfg.vrrp?.syncGroups ?? []).forEach((g, i) => {
    const at = (...rest: P): P => ['vrrp', 'syncGroups', i, ...rest];
    if (groupNames.has(g.name)) err(at('name'), `duplicate sync group name "${g.name}"`);
    groupNames.add(g.name);
    g.instances.forEach((name, j) => {
      if (!instanceByName.has(name)) err(at('instances', j), `unknown instance "${name}"`);
      const other = groupOf.get(name);
      if (other !== undefined) err(at('instances', j), `instance "${name}" is already in sync group "${other}"; an instance belongs to one group at most`);
      else groupOf.set(name, g.name);
    });
  });

  // ---- virtual servers ------------------------------------------------------------------------
  const serviceIds = new Map<string, number>();
  const serviceNames = new Map<string, number>();
  (cfg.virtualServers ?? []).forEach((vs, i) => {
    const at = (...rest: P): P => ['virtualServers', i, ...rest];
    const protocol = vs.protocol ?? 'tcp';
    let id: string | undefined;
    let family: AddressFamily = vs.family === 'ipv6' ? 6 : 4;

    if (vs.fwmark !== undefined) {
      if (vs.address !== undefined) err(at('address'), 'a virtual server has either address/port or fwmark, not both', 'key');
      if (vs.port !== undefined) err(at('port'), 'a fwmark virtual server has no port (the mark selects the traffic)', 'key');
      id = `fwmark:${family}:${vs.fwmark}`;
    } else if (vs.address !== undefined) {
      family = ipFamily(vs.address) ?? 4;
      if (vs.family !== undefined) err(at('family'), 'family is only for fwmark virtual servers (an address has its own family)', 'key');
      if (vs.port === undefined) err(at(), 'missing required key "port" (a virtual server with an address needs a port)');
      else id = serviceKey(protocol, vs.address, vs.port);
      if (vs.port === 0 && vs.persistence === undefined)
        err(at('port'), 'a virtual server on every port (port 0) must be persistent: add persistence.timeout (keepalived sets 360s itself; IPVS refuses it otherwise)');
      if (instances.length > 0 && !allVips.has(vs.address))
        warnings.push({ path: at('address'), message: `${vs.address} is not a VIP of any VRRP instance on this director` });
    } else {
      err(at(), 'a virtual server needs address + port or fwmark');
    }

    if (id !== undefined) {
      const prev = serviceIds.get(id);
      if (prev !== undefined) err(at(vs.fwmark !== undefined ? 'fwmark' : 'address'), `duplicate virtual server ${id} (also virtualServers[${prev}])`);
      else serviceIds.set(id, i);
    }
    if (vs.name !== undefined) {
      const prev = serviceNames.get(vs.name);
      if (prev !== undefined) err(at('name'), `duplicate virtual server name "${vs.name}" (also virtualServers[${prev}])`);
      else serviceNames.set(vs.name, i);
    }

    const scheduler = vs.scheduler ?? 'wlc';
    (vs.schedulerFlags ?? []).forEach((f, j) => {
      const needs = f.startsWith('sh-') ? 'sh' : 'mh';
      if (scheduler !== needs) err(at('schedulerFlags', j), `flag ${f} belongs to scheduler ${needs}, but the scheduler is ${scheduler}`);
    });
    // keepalived: "cannot use ha_suspend with fwmarks - clearing ha_suspend" (a mark has no address to follow).
    if (vs.haSuspend === true && vs.fwmark !== undefined) err(at('haSuspend'), 'haSuspend follows the virtual address; a fwmark virtual server has none');
    if (vs.onePacket === true && protocol !== 'udp') err(at('onePacket'), 'onePacket (one-packet scheduling) applies to udp virtual servers only');
    if (vs.persistence?.netmask !== undefined) {
      const nm = vs.persistence.netmask;
      const ok = family === 4 ? isIpv4Netmask(nm) : /^\d{1,3}$/.test(nm) && Number(nm) >= 1 && Number(nm) <= 128;
      if (!ok) err(at('persistence', 'netmask'), family === 4 ? `"${nm}" is not an IPv4 netmask (e.g. 255.255.255.0)` : `"${nm}" is not an IPv6 prefix length 1..128`);
    }
    if (vs.persistence && (parseDuration(vs.persistence.timeout) ?? 0) < 1000) err(at('persistence', 'timeout'), 'persistence timeout must be at least 1s (IPVS counts whole seconds)');

    const method = vs.method ?? 'nat';
    const checkHc = (hc: HealthCheckFile | undefined, base: HealthCheckFile | undefined, hcPath: P): void => {
      if (!hc) return;
      const type = hc.type ?? base?.type ?? 'tcp';
      if (hc.http && type !== 'http' && type !== 'https') err([...hcPath, 'http'], `http settings on a ${type} check`, 'key');
      if (hc.udp && type !== 'udp') err([...hcPath, 'udp'], `udp settings on a ${type} check`, 'key');
      for (const k of ['ca', 'clientCertificate'] as const)
        if (hc.http?.[k] !== undefined && type !== 'https') err([...hcPath, 'http', k], `${k} is for https checks, not ${type}`, 'key');
      if (hc.http?.ca !== undefined && !(hc.http.tlsVerify ?? base?.http?.tlsVerify ?? false)) err([...hcPath, 'http', 'ca'], 'ca is used only with tlsVerify: true (without it the certificate is not verified)', 'key');
      const udpMin = hc.udp?.minReplyLength ?? base?.udp?.minReplyLength;
      const udpMax = hc.udp?.maxReplyLength ?? base?.udp?.maxReplyLength;
      if (hc.udp && udpMin !== undefined && udpMax !== undefined && udpMin > udpMax)
        err([...hcPath, 'udp', hc.udp.minReplyLength !== undefined ? 'minReplyLength' : 'maxReplyLength'], `minReplyLength ${udpMin} > maxReplyLength ${udpMax}: every reply would fail`);
      if (hc.udp && (hc.udp.minReplyLength !== undefined || hc.udp.maxReplyLength !== undefined) && (hc.udp.expect ?? base?.udp?.expect) === undefined)
        err([...hcPath, 'udp', hc.udp.minReplyLength !== undefined ? 'minReplyLength' : 'maxReplyLength'], 'reply length limits need udp.expect (without it no reply is read)', 'key');
      if (hc.dns && type !== 'dns') err([...hcPath, 'dns'], `dns settings on a ${type} check`, 'key');
      if (hc.exec && type !== 'exec') err([...hcPath, 'exec'], `exec settings on a ${type} check`, 'key');
      if (hc.smtp && type !== 'smtp') err([...hcPath, 'smtp'], `smtp settings on a ${type} check`, 'key');
      if (hc.file && type !== 'file') err([...hcPath, 'file'], `file settings on a ${type} check`, 'key');
      if (type === 'file' && !hc.file && !base?.file) err(hcPath, 'a file check needs file.path');
      if (type === 'ping' && hc.bindInterface !== undefined) err([...hcPath, 'bindInterface'], 'a ping check does not take bindInterface (interface-scoped link-local targets are not pinged yet)', 'key');
      if (hc.bindPort !== undefined && ['ping', 'file', 'exec', 'none'].includes(type)) err([...hcPath, 'bindPort'], `a ${type} check has no socket of its own to bind a port`, 'key');
      // The native engine sets SO_MARK before connect(); Node.js cannot, so only its check types take a mark.
      if (hc.fwmark !== undefined && !['tcp', 'http', 'smtp'].includes(type)) err([...hcPath, 'fwmark'], `fwmark is set by the native probe engine, which runs tcp, plain http and smtp checks, not ${type}`, 'key');
      if (hc.fwmark !== undefined && (hc.agent !== undefined || hc.bindInterface !== undefined)) err([...hcPath, 'fwmark'], 'fwmark does not go with agent or bindInterface (such checks run in Node.js, which cannot mark a socket)', 'key');
      if (type === 'dns' && !hc.dns && !base?.dns) err(hcPath, 'a dns check needs dns.name');
      if (type === 'exec' && !hc.exec && !base?.exec) err(hcPath, 'an exec check needs exec.command');
      if (hc.agent && type === 'none') err([...hcPath, 'agent'], 'agent settings on a none check (nothing runs)', 'key');
      const agentPort = hc.agent?.port ?? base?.agent?.port;
      if ((hc.agent !== undefined || (hc.type !== undefined && base?.agent !== undefined)) && type !== 'agent' && type !== 'none' && agentPort === undefined)
        err([...hcPath, 'agent', 'port'], `an agent beside a ${type} check needs its own port`);
      const page = (u: (BodyRegexPage & { status?: (number | string)[] }) | undefined, uPath: P): void => {
        bodyRegexProblems(u).forEach(([key, why]) => {
          err([...uPath, key], why);
        });
        (u?.status ?? []).forEach((s, j) => {
          if (typeof s === 'string') {
            const [lo, hi] = s.split('-').map(Number);
            if ((lo ?? 0) > (hi ?? 0)) err([...uPath, 'status', j], `range ${s} is empty`);
          }
        });
      };
      page(hc.http, [...hcPath, 'http']);
      (hc.http?.urls ?? []).forEach((u, j) => {
        page(u, [...hcPath, 'http', 'urls', j]);
      });
      if (hc.http?.urls !== undefined) {
        const single = (['path', 'status', 'bodyRegex', 'bodyRegexFlags', 'bodyRegexNoMatch', 'bodyRegexMinOffset', 'bodyRegexMaxOffset', 'digest'] as const).filter((k) => hc.http?.[k] !== undefined);
        if (single.length > 0) err([...hcPath, 'http', single[0] ?? 'path'], `${single.join(', ')} beside urls: with urls, give path, status, bodyRegex and digest per url`, 'key');
      }
      const iv = hc.interval ?? base?.interval;
      if (iv !== undefined && (parseDuration(iv) ?? 0) === 0) err([...hcPath, 'interval'], 'must be more than 0');
      const to = hc.timeout ?? base?.timeout;
      if (to !== undefined && (parseDuration(to) ?? 0) === 0) err([...hcPath, 'timeout'], 'must be more than 0');
    };
    checkHc(vs.healthCheck, undefined, at('healthCheck'));
    /** Every entry of a moreChecks list is a whole check of its own (nothing merges into it). */
    const checkMore = (list: HealthCheckFile[] | undefined, listPath: P): void => {
      (list ?? []).forEach((c, k) => {
        if (c.type === 'none') err([...listPath, k, 'type'], 'a none check among moreChecks checks nothing; leave it out');
        checkHc(c, undefined, [...listPath, k]);
      });
    };
    checkMore(vs.moreChecks, at('moreChecks'));

    if (vs.sorryServer) {
      const sf = ipFamily(vs.sorryServer.address);
      const sm = vs.sorryServer.method ?? method;
      if (sf !== family && sm !== 'tun') err(at('sorryServer', 'address'), `${familyName(sf ?? 4)} sorry server behind an ${familyName(family)} virtual server (only tun can cross families)`);
      if ((sm === 'dr' || sm === 'tun') && vs.sorryServer.port !== undefined && vs.port !== undefined && vs.sorryServer.port !== vs.port)
        err(at('sorryServer', 'port'), `${sm} forwarding cannot map ports: port must be ${vs.port} (the virtual server's) or absent`);
    }

    const seen = new Map<string, number>();
    (vs.realServers ?? []).forEach((rs, j) => {
      const rat = (...rest: P): P => at('realServers', j, ...rest);
      const rsMethod = rs.method ?? method;
      const port = rs.port ?? vs.port ?? 0;
      const key = realServerKey(rs.address, port);
      const prev = seen.get(key);
      if (prev !== undefined) err(rat('address'), `real server ${key} is listed twice (also realServers[${prev}])`);
      else seen.set(key, j);
      const rf = ipFamily(rs.address);
      if (rf !== family && rsMethod !== 'tun')
        err(rat('address'), `${familyName(rf ?? 4)} real server behind an ${familyName(family)} virtual server (only tun can cross families)`);
      if ((rsMethod === 'dr' || rsMethod === 'tun') && vs.fwmark === undefined && rs.port !== undefined && vs.port !== undefined && vs.port !== 0 && rs.port !== vs.port)
        err(rat('port'), `${rsMethod} forwarding cannot map ports: port must be ${vs.port} (the virtual server's) or absent`);
      if (vs.port === 0 && rs.port !== undefined && rs.port !== 0)
        err(rat('port'), 'the real servers of a virtual server on every port (port 0) keep the packet\'s port: leave port out');
      if (rs.tunnel && rsMethod !== 'tun') err(rat('tunnel'), `tunnel settings need method tun (this real server uses ${rsMethod})`, 'key');
      if (rs.tunnel?.type === 'gue' && rs.tunnel.port === undefined) err(rat('tunnel'), 'a gue tunnel needs a port');
      if (rs.tunnel && rs.tunnel.type !== 'gue' && rs.tunnel.port !== undefined) err(rat('tunnel', 'port'), `port is for gue tunnels only (this one is ${rs.tunnel.type})`, 'key');
      if (rs.tunnel?.checksum === 'remcsum' && rs.tunnel.type !== 'gue') err(rat('tunnel', 'checksum'), 'remcsum is for gue tunnels only');
      const up = rs.upperThreshold ?? 0;
      const low = rs.lowerThreshold ?? 0;
      if (up > 0 && low > up) err(rat('lowerThreshold'), `lowerThreshold ${low} is above upperThreshold ${up}`);
      checkHc(rs.healthCheck, vs.healthCheck, rat('healthCheck'));
      checkMore(rs.moreChecks, rat('moreChecks'));
      // A fwmark or every-port service has no port, so a port-based check must be told where to connect.
      const portless = vs.fwmark !== undefined || vs.port === 0;
      const needsPort = (type: string, connectPort: number | undefined, agentPort: number | undefined): boolean =>
        portless && (connectPort ?? (rs.port === 0 ? undefined : rs.port)) === undefined && ['tcp', 'http', 'https', 'udp', 'dns', 'smtp', 'agent'].includes(type) && !(type === 'agent' && agentPort !== undefined);
      const type = rs.healthCheck?.type ?? vs.healthCheck?.type ?? (rs.healthCheck || vs.healthCheck ? 'tcp' : 'none');
      if (needsPort(type, rs.healthCheck?.connectPort ?? vs.healthCheck?.connectPort, rs.healthCheck?.agent?.port ?? vs.healthCheck?.agent?.port))
        err(rat('address'), `this real server has no port, so its ${type} check needs healthCheck.connectPort (a ${vs.port === 0 ? 'virtual server on every port' : 'fwmark service'} has no port)`);
      const more = rs.moreChecks ?? vs.moreChecks ?? [];
      more.forEach((c, k) => {
        if (needsPort(c.type ?? 'tcp', c.connectPort, c.agent?.port))
          err(rat('address'), `this real server has no port, so its ${c.type ?? 'tcp'} check moreChecks[${k}] needs a connectPort (a ${vs.port === 0 ? 'virtual server on every port' : 'fwmark service'} has no port)`);
      });
    });
  });

  if (cfg.bgp !== undefined) errors.push(...checkBgp(cfg.bgp, serviceRefs(cfg)));
  if (cfg.alerts !== undefined) errors.push(...checkAlerts(cfg.alerts, (cfg.vrrp?.instances ?? []).map((i) => i.name), serviceRefs(cfg)));
  if (cfg.cluster !== undefined) errors.push(...checkCluster(cfg.cluster, cfg.node?.name));
  checkSyncDaemon(cfg, err);
  return { errors, warnings };
}

/** The virtual servers as the bgp and alerts sections refer to them: canonical id, name, address. */
function serviceRefs(cfg: ConfigFile): VirtualServerRef[] {
  return (cfg.virtualServers ?? []).flatMap((vs) => (vs.address !== undefined && vs.port !== undefined ? [{ id: serviceKey(vs.protocol ?? 'tcp', vs.address, vs.port), name: vs.name, address: vs.address }] : vs.fwmark !== undefined ? [{ id: `fwmark:${vs.family === 'ipv6' ? 6 : 4}:${vs.fwmark}`, name: vs.name }] : []));
}

/** The kernel's own rules for the sync sysctls (ip_vs_ctl.c refuses the write with EINVAL otherwise). */
function checkSyncDaemon(cfg: ConfigFile, err: (path: P, message: string) => void): void {
  const sd = cfg.ipvs?.syncDaemon;
  if (sd === undefined) return;
  const at = (key: string): P => ['ipvs', 'syncDaemon', key];
  const threshold = sd.threshold ?? 3;
  const period = sd.thresholdPeriod ?? 0;
  if (period !== 0 && threshold >= period)
    err(at(sd.threshold !== undefined ? 'threshold' : 'thresholdPeriod'), `threshold ${threshold} must be less than thresholdPeriod ${period} (or thresholdPeriod 0); the kernel refuses sync_threshold "${threshold} ${period}"`);
  const ports = sd.ports ?? 1;
  if ((ports & (ports - 1)) !== 0) err(at('ports'), `ports must be a power of two (1, 2, 4 … 64), got ${ports}; the kernel refuses sync_ports ${ports}`);
  const refresh = sd.refreshPeriod === undefined ? 0 : (parseDuration(sd.refreshPeriod) ?? 0);
  if (refresh % 1000 !== 0) err(at('refreshPeriod'), `refreshPeriod must be whole seconds (the kernel counts seconds), got ${refresh}ms`);
  if ((sd.port ?? 8848) + ports - 1 > 65535) err(at('ports'), `${ports} sync ports from port ${sd.port ?? 8848} run past 65535`);
}
