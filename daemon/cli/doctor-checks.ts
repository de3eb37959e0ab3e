// `lvsd doctor`, the pure part: from what the machine says (Facts, gathered by doctor.ts) and the config, the
// findings an LVS operator trips over on a director, and the exact setup each DR and TUN real server needs
// (lvsd programs nothing there). No I/O here, so every rule is a table row in test/unit/doctor.test.ts.
import type { Config, VirtualServer } from '../config/types.js';
import type { Capabilities } from './capabilities.js';

export type Status = 'ok' | 'warn' | 'fail';

export interface Finding {
  status: Status;
  check: string;
  detail: string;
  /** What to run or change, when something is wrong. */
  fix?: string;
}

export interface InterfaceFacts {
  exists: boolean;
  up: boolean;
  multicast: boolean;
  ipv4: string[];
}

/** What doctor.ts read from this machine. Absent sysctls are undefined (the module or the file is not there). */
export interface Facts {
  caps: Capabilities;
  /** Kernel modules: loaded (or built in), loadable (on disk), or missing. */
  module(name: string): 'loaded' | 'loadable' | 'missing';
  /** A sysctl by its dotted name, trimmed. */
  sysctl(name: string): string | undefined;
  iface(name: string): InterfaceFacts;
}

const CHECK = {
  caps: 'capabilities',
  ipvs: 'ip_vs module',
  sched: 'scheduler module',
  forward: 'forwarding',
  conntrack: 'conntrack',
  rpFilter: 'rp_filter',
  vipIf: 'VIP interface',
  syncIf: 'sync interface',
  syncSysctl: 'sync sysctls',
} as const;

export function doctorFindings(config: Config, f: Facts): Finding[] {
  const out: Finding[] = [];
  const add = (status: Status, check: string, detail: string, fix?: string): void => {
    out.push(fix === undefined ? { status, check, detail } : { status, check, detail, fix });
  };
  const usesIpvs = config.dataplane === 'ipvs' || config.dataplane === 'auto';

  // Capabilities: VRRP needs raw sockets; VIPs and IPVS need CAP_NET_ADMIN.
  if (f.caps.netAdmin && f.caps.netRaw) add('ok', CHECK.caps, 'CAP_NET_ADMIN and CAP_NET_RAW');
  else {
    const missing = [!f.caps.netAdmin ? 'CAP_NET_ADMIN (VIPs, IPVS)' : '', !f.caps.netRaw ? 'CAP_NET_RAW (VRRP adverts, gratuitous ARP)' : ''].filter((s) => s !== '');
    add('fail', CHECK.caps, `missing ${missing.join(' and ')}`, 'run as root, or with AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW (systemd/lvsd.service)');
  }

  // IPVS and the schedulers the virtual servers use.
  if (usesIpvs) {
    const ipvs = f.module('ip_vs');
    if (ipvs === 'loaded') add('ok', CHECK.ipvs, 'ip_vs is loaded');
    else if (ipvs === 'loadable') add('warn', CHECK.ipvs, 'ip_vs is not loaded (lvsd loads it when it opens IPVS)', 'modprobe ip_vs; echo ip_vs > /etc/modules-load.d/ip_vs.conf');
    else add(config.dataplane === 'ipvs' ? 'fail' : 'warn', CHECK.ipvs, `this kernel has no IPVS${config.dataplane === 'auto' ? '; dataplane: auto falls back to nftables or userspace' : ''}`, 'use a kernel with CONFIG_IP_VS (Debian, Ubuntu, RHEL ship it as a module)');
    for (const sched of [...new Set(config.virtualServers.map((v) => v.scheduler))].sort()) {
      const m = f.module(`ip_vs_${sched}`);
      if (m === 'loaded') add('ok', CHECK.sched, `ip_vs_${sched} is loaded`);
      else if (m === 'loadable') add('ok', CHECK.sched, `ip_vs_${sched} loads on first use`);
      else add('fail', CHECK.sched, `ip_vs_${sched} is not in this kernel: virtual servers with scheduler ${sched} are refused`, `pick another scheduler, or a kernel that has ip_vs_${sched}`);
    }
  }

  // Forwarding and conntrack, by forwarding method.
  const methods = new Set(config.virtualServers.flatMap((v) => [v.method, ...v.realServers.map((r) => r.method)]));
  const families = new Set(config.virtualServers.map((v) => v.family));
  if (methods.has('nat')) {
    for (const fam of families) {
      const name = fam === 4 ? 'net.ipv4.ip_forward' : 'net.ipv6.conf.all.forwarding';
      const v = f.sysctl(name);
      if (v === '1') add('ok', CHECK.forward, `${name} = 1 (NAT replies are routed back through this director)`);
      else add('fail', CHECK.forward, `${name} = ${v ?? '(absent)'}: NAT traffic cannot reach the real servers and back`, `sysctl -w ${name}=1; echo ${name}=1 > /etc/sysctl.d/90-lvsd.conf`);
    }
    const ct = f.sysctl('net.ipv4.vs.conntrack');
    if (ct === '1') add('ok', CHECK.conntrack, 'net.ipv4.vs.conntrack = 1: netfilter sees IPVS NAT connections (needed for SNAT/masquerade or stateful rules on this director)');
    else add('ok', CHECK.conntrack, `net.ipv4.vs.conntrack = ${ct ?? '(absent)'}: IPVS connections bypass conntrack; set 1 only if nftables/iptables NAT or stateful rules must see them`);
  }
  if (methods.has('dr') || methods.has('tun')) {
    add('ok', CHECK.forward, `DR/TUN: replies go from the real servers straight to the clients; this director needs no forwarding for them`);
  }

  // rp_filter: the kernel takes the larger of "all" and the interface's value.
  for (const dev of [...new Set(config.vrrp.instances.flatMap((i) => i.virtualIpaddresses.filter((v) => v.family === 4).map((v) => v.dev)))].sort()) {
    const all = Number(f.sysctl('net.ipv4.conf.all.rp_filter') ?? '0');
    const one = Number(f.sysctl(`net.ipv4.conf.${dev}.rp_filter`) ?? '0');
    const eff = Math.max(all, one);
    if (eff === 1)
      add('warn', CHECK.rpFilter, `${dev}: strict rp_filter: a client's packet to a VIP is dropped unless the route back to that client leaves by ${dev} (multi-homed directors)`, `sysctl -w net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.${dev}.rp_filter=2`);
    else add('ok', CHECK.rpFilter, `${dev}: rp_filter ${eff} (${eff === 0 ? 'off' : 'loose'})`);
  }

  // The VIPs' interfaces.
  const vipDevs = new Map<string, string[]>();
  for (const inst of config.vrrp.instances) for (const v of inst.virtualIpaddresses) vipDevs.set(v.dev, [...(vipDevs.get(v.dev) ?? []), `${inst.name} ${v.address}`]);
  for (const [dev, users] of [...vipDevs].sort(([a], [b]) => a.localeCompare(b))) {
    const i = f.iface(dev);
    if (!i.exists) add('fail', CHECK.vipIf, `${dev} does not exist (${users.join(', ')})`, `fix the interface name in vrrp.instances, or create ${dev}`);
    else if (!i.up) add('fail', CHECK.vipIf, `${dev} is down (${users.join(', ')}): VRRP goes to FAULT`, `ip link set ${dev} up`);
    else add('ok', CHECK.vipIf, `${dev} is up (${users.join(', ')})`);
  }

  // The sync daemon's interface: multicast, and an IPv4 address the kernel binds its socket to.
  const sd = config.ipvs.syncDaemon;
  if (sd !== undefined) {
    const i = f.iface(sd.interface);
    if (!i.exists) add('fail', CHECK.syncIf, `${sd.interface} does not exist: the sync daemon cannot start`, 'fix ipvs.syncDaemon.interface');
    else if (!i.up) add('fail', CHECK.syncIf, `${sd.interface} is down: no connection is synced`, `ip link set ${sd.interface} up`);
    else if (!i.multicast) add('fail', CHECK.syncIf, `${sd.interface} has multicast off: the sync messages to ${sd.mcastGroup} never leave`, `ip link set ${sd.interface} multicast on`);
    else if (i.ipv4.length === 0 && !sd.mcastGroup.includes(':')) add('fail', CHECK.syncIf, `${sd.interface} has no IPv4 address: the kernel binds the sync socket to one`, `ip addr add ADDRESS/PREFIX dev ${sd.interface}`);
    else add('ok', CHECK.syncIf, `${sd.interface}: up, multicast, ${i.ipv4.join(', ') || 'IPv6'}; group ${sd.mcastGroup} port ${sd.port}${sd.ports > 1 ? `-${sd.port + sd.ports - 1}` : ''}; role ${sd.role}`);
    const t = f.sysctl('net.ipv4.vs.sync_threshold');
    const want = `${sd.threshold} ${sd.thresholdPeriod}`;
    if (t !== undefined && t.split(/\s+/).join(' ') !== want)
      add('ok', CHECK.syncSysctl, `net.ipv4.vs.sync_threshold is "${t.split(/\s+/).join(' ')}" now; lvsd writes "${want}" when it starts the sync daemon`);
  }
  return out;
}

/** The exit code: 1 when anything failed. */
export function doctorExit(findings: readonly Finding[]): 0 | 1 {
  return findings.some((x) => x.status === 'fail') ? 1 : 0;
}

export function renderFindings(findings: readonly Finding[]): string {
  const mark: Record<Status, string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };
  return findings.map((x) => `${mark[x.status]}  ${x.check}: ${x.detail}${x.fix === undefined ? '' : `\n      fix: ${x.fix}`}`).join('\n');
}

/**
 * The shell lines each DR or TUN real server needs, per virtual server: lvsd sets up nothing there. DR: the VIP
 * on lo, and ARP kept off it (arp_ignore=1: answer only for addresses of the receiving interface; arp_announce=2:
 * never use the VIP as an ARP source). TUN: the VIP on the tunnel device, rp_filter off on it (the decapsulated
 * packet's source, the client, is not routed via the tunnel). The kernel takes the larger of "all" and the
 * interface's value for all three sysctls, so "all" is enough whatever the interface is called.
 */
export function realServerSetup(config: Config): string {
  const blocks: string[] = [];
  for (const vs of config.virtualServers) {
    const byMethod = new Map<string, string[]>();
    for (const r of vs.realServers) if (r.method !== 'nat') byMethod.set(tunnelKey(r), [...(byMethod.get(tunnelKey(r)) ?? []), r.address]);
    for (const [key, servers] of byMethod) blocks.push(setupBlock(vs, key, servers));
  }
  if (blocks.length === 0) return '# No DR or TUN real servers: nothing to set up on them (NAT needs them to route replies back through the director: default route via the director).';
  return blocks.join('\n\n');
}

function tunnelKey(r: VirtualServer['realServers'][number]): string {
  if (r.method === 'dr') return 'dr';
  return `tun:${r.tunnel?.type ?? 'ipip'}:${r.tunnel?.port ?? ''}`;
}

function setupBlock(vs: VirtualServer, key: string, servers: string[]): string {
  const vip = vs.address;
  const head = `# ${vs.name} (${vs.id}), ${key === 'dr' ? 'DR' : `TUN (${key.split(':')[1] ?? 'ipip'})`}: on each of ${servers.join(', ')}`;
  if (vip === undefined) return `${head}\n# a fwmark service: add each address the mark stands for as below (the VIP lines repeat per address)`;
  const v6 = vs.family === 6;
  const addr = v6 ? `ip -6 addr add ${vip}/128 dev` : `ip addr add ${vip}/32 dev`;
  const arp = 'sysctl -w net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2';
  const persist = 'printf "net.ipv4.conf.all.arp_ignore=1\\nnet.ipv4.conf.all.arp_announce=2\\n" > /etc/sysctl.d/90-lvs-real-server.conf';
  if (key === 'dr') {
    return [head, `${addr} lo${v6 ? ' nodad' : ''}`, ...(v6 ? ['# IPv6 has no arp_ignore: keep the real servers from answering neighbour solicitations for the VIP (e.g. an nft rule on them)'] : [arp, persist])].join('\n');
  }
  const [, type = 'ipip', port = ''] = key.split(':');
  const lines = [head];
  if (type === 'gre') lines.push('modprobe ip_gre', 'ip link set gre0 up', `${addr} gre0`, 'sysctl -w net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.gre0.rp_filter=0');
  else if (type === 'gue') {
    const p = port === '' ? '6080' : port;
    lines.push('modprobe fou ipip', `ip fou add port ${p} gue`, 'ip link set tunl0 up', `${addr} tunl0`, 'sysctl -w net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.tunl0.rp_filter=0');
  } else lines.push(`modprobe ${v6 ? 'ip6_tunnel' : 'ipip'}`, `ip link set ${v6 ? 'ip6tnl0' : 'tunl0'} up`, `${addr} ${v6 ? 'ip6tnl0' : 'tunl0'}`, ...(v6 ? [] : ['sysctl -w net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.tunl0.rp_filter=0']));
  if (!v6) lines.push(arp);
  return lines.join('\n');
}
