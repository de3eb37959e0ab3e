// The keepalived corpus (test/fixtures/keepalived) as the behaviour harnesses use it: which files have
// virtual servers or VRRP instances, and the one transform the IPVS differential applies to the imported
// config. Pure: the guest (test/vm/guest/corpus.ts) and the unit test of the transform share it.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importKeepalived, type ConfigOut, type ImportResult } from '../../daemon/config/keepalived/index.js';

/** This file is dist/test/support/keepalived-corpus.js; the fixtures stay in the source tree. */
export const CORPUS_DIR = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/keepalived');

/** Every corpus file, relative to CORPUS_DIR: a directory stands for its keepalived.conf (an include tree). */
export function corpusFiles(): string[] {
  return readdirSync(CORPUS_DIR, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? join(e.name, 'keepalived.conf') : e.name))
    .filter((f) => f.endsWith('.conf'))
    .sort();
}

/** The config id the corpus is imported with (the corpus has no `@ID` lines, so any would do). */
export const CORPUS_CONFIG_ID = 'lb1';

export function importCorpusFile(file: string): ImportResult {
  return importKeepalived(join(CORPUS_DIR, file), { configId: CORPUS_CONFIG_ID });
}

export interface DaemonPlace {
  /** API listen address (each lvsd of a batch needs its own). */
  listen: string;
  /** Admin socket path. */
  socket: string;
  stateFile: string;
}

/**
 * The imported config as the IPVS differential runs it: keepalived runs there as its checker process only
 * (`keepalived --check`), so lvsd runs without its `vrrp` section and without the sync daemon (which follows
 * the VRRP role) — VRRP is the netns harness's part. The dataplane is pinned to ipvs (no silent fallback),
 * and the API, socket and state file get places of their own so several directors can run side by side.
 * Everything else — virtual servers, real servers, checkers, quorum, sorry servers, IPVS timeouts — is the
 * importer's output untouched.
 */
export function ipvsOnlyConfig(config: ConfigOut, place: DaemonPlace): Record<string, unknown> {
  const { vrrp: _vrrp, ipvs, ...rest } = config;
  const { syncDaemon: _sync, ...ipvsRest } = ipvs ?? {};
  return {
    ...rest,
    ...(Object.keys(ipvsRest).length > 0 ? { ipvs: ipvsRest } : {}),
    dataplane: 'ipvs',
    api: { listen: place.listen, socket: place.socket },
    stateFile: place.stateFile,
  };
}

/** `ipvsadm -S` option of a service's protocol. */
const PROTOCOL_FLAG = { tcp: '-t', udp: '-u', sctp: '--sctp-service' } as const;

/**
 * The service keys (`-t 10.0.0.1:80`, `-f 7`, `-u [fd00::1]:53`) an imported config programs: how a line of
 * `ipvsadm -Sn` is attributed to a corpus file. Keys come from the imported config, so the harness also
 * compares the whole table (every file at once) — a service the importer got wrong cannot hide there.
 */
export function serviceKeys(config: ConfigOut): string[] {
  return (config.virtualServers ?? []).map((vs) => {
    if (vs.fwmark !== undefined) return `-f ${vs.fwmark}`;
    const address = vs.address ?? '';
    const host = address.includes(':') ? `[${address}]` : address;
    return `${PROTOCOL_FLAG[vs.protocol ?? 'tcp']} ${host}:${vs.port ?? 0}`;
  });
}

/** The service key of one `ipvsadm -Sn` line (`-A -t 10.0.0.1:80 -s rr` → `-t 10.0.0.1:80`). */
export function serviceKeyOfLine(line: string): string {
  const [, flag = '', value = ''] = line.trim().split(/\s+/);
  return `${flag} ${value}`;
}

/**
 * `ipvsadm -Ln --thresholds` as sorted lines `SERVICE -> DEST FORWARD WEIGHT UPPER LOWER` (the connection
 * counters dropped): `ipvsadm -S` does not save thresholds, so this is how they are compared.
 */
export function thresholdLines(text: string): string[] {
  const out: string[] = [];
  let service = '';
  for (const raw of text.split('\n')) {
    const cols = raw.trim().split(/\s+/);
    if (/^(TCP|UDP|SCTP|FWM)$/.test(cols[0] ?? '')) service = `${cols[0] ?? ''} ${cols[1] ?? ''}`;
    else if (cols[0] === '->' && cols[1] !== 'RemoteAddress:Port') out.push(`${service} -> ${cols.slice(1, 6).join(' ')}`);
  }
  return out.sort();
}

/** What one side has that the other has not, line by line (both sorted or not). */
export function lineDiff(a: readonly string[], b: readonly string[]): { onlyA: string[]; onlyB: string[] } {
  const inB = new Set(b);
  const inA = new Set(a);
  return { onlyA: a.filter((l) => !inB.has(l)), onlyB: b.filter((l) => !inA.has(l)) };
}

/**
 * Several imported configs as one lvsd config, for one lvsd process in the (slow, emulated) guest: the
 * virtual servers side by side, which is only sound because no two files program the same service (checked
 * here), and the IPVS timeouts of the one file that sets them (two files setting different ones is refused).
 */
export function mergeConfigs(configs: readonly ConfigOut[]): ConfigOut {
  const virtualServers = configs.flatMap((c) => c.virtualServers ?? []);
  const keys = configs.flatMap((c) => serviceKeys(c));
  const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
  if (twice.length > 0) throw new Error(`mergeConfigs: ${twice.join(', ')} programmed by more than one file`);
  const timeouts = [...new Set(configs.flatMap((c) => (c.ipvs?.timeouts === undefined ? [] : [JSON.stringify(c.ipvs.timeouts)])))];
  if (timeouts.length > 1) throw new Error(`mergeConfigs: the files set different IPVS timeouts: ${timeouts.join(' vs ')}`);
  const [t] = timeouts;
  return { node: { name: 'corpus' }, ...(t === undefined ? {} : { ipvs: { timeouts: JSON.parse(t) as NonNullable<ConfigOut['ipvs']>['timeouts'] } }), virtualServers };
}

// ---- the VRRP pair: keepalived with the original file on one node, lvsd with the import on its peer ----

type InstanceOut = NonNullable<NonNullable<ConfigOut['vrrp']>['instances']>[number];

export interface Vip {
  address: string;
  ifname: string;
}

/** Where an instance's virtual addresses live, excluded ones too (keepalived: `dev` per address, else the instance's interface). */
export function vipsOf(i: InstanceOut): Vip[] {
  return [...(i.virtualIpaddresses ?? []), ...(i.virtualIpaddressesExcluded ?? [])].map((v) =>
    typeof v === 'string' ? { address: v.split('/')[0] ?? v, ifname: i.interface } : { address: v.address.split('/')[0] ?? v.address, ifname: v.dev ?? i.interface });
}

export interface VrrpPair {
  /** Interface names both nodes get, each on a segment of its own (the corpus's own names: eth0, ens5, bond0.100…). */
  interfaces: string[];
  /** CIDR addresses per interface of the keepalived node and of the lvsd node. */
  keepalivedAddresses: Record<string, string[]>;
  lvsdAddresses: Record<string, string[]>;
  /** The peer director's lvsd config (see vrrpPair). */
  lvsdConfig: Record<string, unknown>;
}

const ipv4Bits = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);

/** The longest prefix (at most /24) both IPv4 addresses share: they must be on one link. */
function commonPrefix4(a: string, b: string): number {
  const x = ipv4Bits(a) ^ ipv4Bits(b);
  return Math.min(24, x === 0 ? 32 : 31 - Math.floor(Math.log2(x)));
}

function cidr(address: string, other: string): string {
  if (!address.includes(':')) return `${address}/${commonPrefix4(address, other)}`;
  const net = (a: string): string => a.split(':').slice(0, 3).join(':');
  if (net(address) !== net(other)) throw new Error(`vrrpPair: unicast peers ${address} and ${other} are not in one /64 the test can build`);
  return `${address}/64`;
}

/**
 * The pair the netns harness builds from one corpus file. Both nodes get every interface the file names
 * (instance interfaces and tracked ones) with the same names, so keepalived runs the ORIGINAL file unchanged.
 * Addresses: an instance with unicast_src_ip gives the keepalived node that address and the lvsd node the
 * first unicast peer of the same family — the other director the file was written for; any other interface
 * gets 10.99.N.1/24 and .2/24. lvsd runs the imported config as that other director's would read:
 *   - priority + priorityDelta (clamped to 1..254), state BACKUP when it is the lower one;
 *   - unicast_src_ip = its own address, peers = the original source and the remaining peers;
 *   - node name "<name>-peer"; no virtual servers and no sync daemon (the IPVS part is the vm harness's);
 *   - the API, socket and state file in `place`.
 * Everything else (VIPs, versions, intervals, preemption, auth, scripts, tracking, sync groups) is the
 * importer's output untouched.
 */
export function vrrpPair(config: ConfigOut, opts: { priorityDelta: number; place: DaemonPlace }): VrrpPair {
  const instances = config.vrrp?.instances ?? [];
  const names = new Set<string>();
  for (const i of instances) {
    names.add(i.interface);
    for (const v of vipsOf(i)) names.add(v.ifname);
    for (const t of i.trackInterfaces ?? []) names.add(t.name);
  }
  const interfaces = [...names].sort();
  const ka: Record<string, string[]> = {};
  const lv: Record<string, string[]> = {};
  interfaces.forEach((n, idx) => {
    ka[n] = [`10.99.${idx}.1/24`];
    lv[n] = [`10.99.${idx}.2/24`];
  });
  const peerOf = new Map<string, string>();
  for (const i of instances) {
    if (i.unicastSrcIp === undefined) continue;
    const src = i.unicastSrcIp;
    const peer = (i.unicastPeers ?? []).find((p) => p.includes(':') === src.includes(':'));
    if (peer === undefined) throw new Error(`vrrpPair: ${i.name} has unicast_src_ip ${src} but no peer of its family`);
    peerOf.set(i.name, peer);
    ka[i.interface]?.push(cidr(src, peer));
    lv[i.interface]?.push(cidr(peer, src));
  }
  const lower = opts.priorityDelta < 0;
  const peerInstances = instances.map((i) => {
    const out: InstanceOut = { ...i, priority: Math.max(1, Math.min(254, (i.priority ?? 100) + opts.priorityDelta)) };
    if (lower) out.state = 'BACKUP';
    const own = peerOf.get(i.name);
    if (own !== undefined && i.unicastSrcIp !== undefined) {
      out.unicastSrcIp = own;
      out.unicastPeers = [i.unicastSrcIp, ...(i.unicastPeers ?? []).filter((p) => p !== own)];
    }
    return out;
  });
  const { virtualServers: _vs, ipvs, vrrp, node, ...rest } = config;
  const { syncDaemon: _sync, ...ipvsRest } = ipvs ?? {};
  return {
    interfaces,
    keepalivedAddresses: ka,
    lvsdAddresses: lv,
    lvsdConfig: {
      ...rest,
      node: { name: `${node?.name ?? 'lvsd'}-peer` },
      ...(Object.keys(ipvsRest).length > 0 ? { ipvs: ipvsRest } : {}),
      vrrp: { ...vrrp, instances: peerInstances },
      api: { listen: opts.place.listen, socket: opts.place.socket },
      stateFile: opts.place.stateFile,
    },
  };
}

/**
 * keepalived's `lvs_sync_daemon` makes its VRRP process start the IPVS sync daemon, and without IPVS in the
 * kernel that process dies and respawns (keepalived 2.2.7). The netns harness runs on the host's kernel, which
 * may lack IPVS: there, and only there, the directive is commented out of keepalived's copy (the lvsd side
 * drops its sync daemon likewise, see vrrpPair). Returns the text and the 1-based lines it commented out.
 */
export function withoutSyncDaemon(text: string): { text: string; lines: number[] } {
  const lines: number[] = [];
  const out = text.split('\n').map((l, i) => {
    if (!/^\s*lvs_sync_daemon\b/.test(l)) return l;
    lines.push(i + 1);
    return `# netns harness, no IPVS in this kernel: ${l.trim()}`;
  });
  return { text: out.join('\n'), lines };
}
