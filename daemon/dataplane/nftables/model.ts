// The nftables dataplane's own picture of its table: what a DesiredTable becomes once it is expressed
// in nft terms (one chain per virtual server, a DNAT map chosen by numgen or jhash). Pure: no I/O.
// The renderer turns a model into nft JSON commands, the parser turns `nft -j list table` back into a
// model, and the diff compares two models — so "what we want" and "what the kernel holds" meet in
// one shape.
import { UnsupportedByDataplane, type Family, type Protocol, type ServiceSpec, type DesiredTable } from '../types.js';
import { maglevRuns } from './maglev-map.js';
import { MH_TABLE_SIZE } from '../maglev.js';

export const DEFAULT_TABLE = 'lvsd';

/** One range of DNAT-map slots [from, to] that lead to one real server. */
export interface NftSlot {
  from: number;
  to: number;
  address: string;
  /** 0 = keep the packet's destination port (fwmark services whose real servers have no port). */
  port: number;
}

export type NftMatch =
  | { kind: 'tuple'; address: string; protocol: Protocol; port: number }
  | { kind: 'fwmark'; mark: number };

/** Which packet fields the source-hash schedulers hash. */
export type HashField = 'saddr' | 'sport' | 'daddr';

export type NftDispatch = { kind: 'numgen' } | { kind: 'jhash'; fields: HashField[]; seed: number };

export interface NftService {
  /** The director's service id ("tcp:10.0.0.1:80"). */
  id: string;
  chain: string;
  family: Family;
  match: NftMatch;
  dispatch: NftDispatch;
  /** Size of the slot space: the sum of the reduced weights, or HASH_SLOTS for a hashed service; 0 when no real server takes new connections. */
  mod: number;
  slots: NftSlot[];
}

/**
 * Each service has two slot chains, "-a" and "-b" (slotChainName), of which one is live: the vmap element
 * of the service goes to it, and it holds the DNAT map. A change fills the other one first and then points
 * the element at it (render.ts says why).
 */
export type SlotSide = 'a' | 'b';

export interface NftTableModel {
  table: string;
  masquerade: boolean;
  /** Keyed by the service's chain name (chainName: the slot chains are named after it). */
  services: Map<string, NftService>;
  /** The slot chain each service's vmap element reaches now; absent = not known (not written yet, or the one-chain layout). */
  live: Map<string, SlotSide>;
  /**
   * Services whose vmap element still goes to a chain named chainName (a table of an older lvsd: a dispatch
   * chain whose one rule goes to the live slot chain, or before that the DNAT in that chain itself). The
   * next plan points the element at the slot chain and removes that chain. Only a table read from the kernel has it.
   */
  oldLayout?: ReadonlySet<string>;
}

export interface ModelOptions {
  table?: string;
  /** SNAT (masquerade) forwarded connections to the real servers; off = the director is their gateway. */
  masquerade?: boolean;
}

/** Schedulers nftables can express exactly, and how it approximates the others. */
export const SCHEDULER_MAPPING: Readonly<Record<ServiceSpec['scheduler'], string>> = {
  rr: 'numgen inc (round robin)',
  wrr: 'numgen inc over weighted slot ranges',
  sh: 'jhash of the source address (sh-port adds the source port)',
  mh: `jhash of the source address (mh-port adds the source port) into a ${String(MH_TABLE_SIZE)}-slot Maglev table: every director with the same real servers picks the same one`,
  dh: 'jhash of the destination address',
  lblc: 'jhash of the destination address (dh-like, no load check)',
  lblcr: 'jhash of the destination address (dh-like, no load check)',
  lc: 'weighted numgen (nftables has no per-backend connection count in the data path)',
  wlc: 'weighted numgen (nftables has no per-backend connection count in the data path)',
  sed: 'weighted numgen (no connection count in the data path)',
  nq: 'weighted numgen (no connection count in the data path)',
  twos: 'weighted numgen (no connection count in the data path)',
  fo: 'the highest-weight real server only (weighted failover)',
  ovf: 'the highest-weight real server only (no overflow count in the data path)',
};

/** Canonical text of an address the way nft prints it (IPv6 compressed, lower case). */
export function canonicalAddress(address: string): string {
  if (!address.includes(':')) return address;
  const host = new URL(`http://[${address}]/`).hostname;
  return host.slice(1, -1);
}

export function chainName(match: NftMatch, family: Family): string {
  if (match.kind === 'fwmark') return `svc-fwmark${family}-${match.mark}`;
  return `svc-${match.protocol}-${match.address.replace(/:/g, '_')}-${match.port}`;
}

export function slotChainName(chain: string, side: SlotSide): string {
  return `${chain}-${side}`;
}

export function serviceIdOf(match: NftMatch, family: Family): string {
  if (match.kind === 'fwmark') return `fwmark:${family}:${match.mark}`;
  const a = family === 6 ? `[${match.address}]` : match.address;
  return `${match.protocol}:${a}:${match.port}`;
}

/**
 * The slot space of a hashed service (sh, dh, lblc, lblcr, and any persistent one), whatever its weights.
 * A rule's `mod` is part of the rule, and adding a rule that NATs makes the kernel validate the whole
 * table's jump graph at commit (measured on 6.18: one change at 5,000 services 10.5 ms with a new rule,
 * 0.6–1.2 ms with elements alone). A round robin must turn over exactly the sum of its weights, so its
 * `mod` follows them; a hash only needs each real server's share of the space, so it keeps one size.
 */
export const HASH_SLOTS = 65536;

/**
 * Each weight's share of `size` slots: one each first (every real server that takes connections keeps a
 * slot, however small its weight), the rest in proportion, the remainders to the largest fractions (ties:
 * the earlier). Sums to `size`; needs weights.length ≤ size.
 */
export function hashSlots(weights: readonly number[], size: number): number[] {
  const total = weights.reduce((a, w) => a + w, 0);
  const spare = size - weights.length;
  const exact = weights.map((w) => (total === 0 ? 0 : (spare * w) / total));
  const out = exact.map((x) => 1 + Math.floor(x));
  let left = size - out.reduce((a, n) => a + n, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (left <= 0) break;
    out[i] = (out[i] ?? 0) + 1;
    left--;
  }
  return out;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** FNV-1a: a stable jhash seed per service, so a client keeps its real server across reloads and restarts. */
export function seedFor(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function dispatchFor(spec: ServiceSpec): NftDispatch {
  const flags = spec.schedulerFlags ?? [];
  switch (spec.scheduler) {
    case 'sh':
    case 'mh': {
      const withPort = flags.includes('sh-port') || flags.includes('mh-port');
      return { kind: 'jhash', fields: withPort ? ['saddr', 'sport'] : ['saddr'], seed: seedFor(spec.id) };
    }
    case 'dh':
    case 'lblc':
    case 'lblcr':
      return { kind: 'jhash', fields: ['daddr'], seed: seedFor(spec.id) };
    default:
      // Persistence pins a client to one real server: the nearest nftables gets is hashing the source.
      if (spec.persistence !== undefined) return { kind: 'jhash', fields: ['saddr'], seed: seedFor(spec.id) };
      return { kind: 'numgen' };
  }
}

/** Expresses one virtual server in nft terms; throws UnsupportedByDataplane for what NAT-by-nft cannot do. */
export function serviceModel(spec: ServiceSpec): NftService {
  for (const rs of spec.realServers) {
    if (rs.method !== 'nat') {
      throw new UnsupportedByDataplane(
        'nftables',
        `${spec.id} → ${rs.id}`,
        `${rs.method.toUpperCase()} forwarding needs the IPVS dataplane; nftables forwards by NAT only`,
      );
    }
  }
  if (spec.persistence?.engine !== undefined) {
    throw new UnsupportedByDataplane('nftables', spec.id, `persistence engine ${spec.persistence.engine} needs the IPVS dataplane`);
  }
  if (spec.onePacket === true) {
    throw new UnsupportedByDataplane('nftables', spec.id, 'one-packet scheduling (ops) needs the IPVS dataplane');
  }
  let match: NftMatch;
  if (spec.fwmark !== undefined) {
    match = { kind: 'fwmark', mark: spec.fwmark };
  } else {
    if (spec.address === undefined || spec.port === undefined) {
      throw new UnsupportedByDataplane('nftables', spec.id, 'a service needs an address and a port, or a fwmark');
    }
    if (spec.port === 0) throw new UnsupportedByDataplane('nftables', spec.id, 'a virtual server on every port (port 0) needs the IPVS dataplane; use a fwmark service here');
    match = { kind: 'tuple', address: canonicalAddress(spec.address), protocol: spec.protocol, port: spec.port };
  }
  let active = spec.realServers.filter((rs) => rs.weight > 0);
  if ((spec.scheduler === 'fo' || spec.scheduler === 'ovf') && active.length > 0) {
    const top = Math.max(...active.map((rs) => rs.weight));
    active = active.filter((rs) => rs.weight === top).slice(0, 1);
  }
  // Same order every time, so an unchanged service renders to an unchanged map.
  active = [...active].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const roundRobin = spec.scheduler === 'rr';
  const weights = active.map((rs) => (roundRobin ? 1 : rs.weight));
  const divisor = weights.reduce((g, w) => gcd(g, w), 0) || 1;
  const slots: NftSlot[] = [];
  let next = 0;
  const withPort = active.filter((rs) => rs.port !== 0).length;
  if (withPort !== 0 && withPort !== active.length) {
    throw new UnsupportedByDataplane('nftables', spec.id, 'real servers must all have a port, or all keep the packet\'s port (0)');
  }
  const hashed = dispatchFor(spec).kind === 'jhash';
  if (spec.scheduler === 'mh' && active.length > 0) {
    // Maglev (maglev-map.ts says why): the map covers all M slots, whatever the weights add up to.
    for (const run of maglevRuns(active)) slots.push({ from: run.from, to: run.to, address: canonicalAddress(run.realServer.address), port: run.realServer.port });
    next = MH_TABLE_SIZE;
  } else if (hashed && active.length > 0 && active.length <= HASH_SLOTS) {
    // A hash picks a slot, not a turn: the slot space can stay HASH_SLOTS whatever the weights, so that a
    // change of them (or of the members) is the map's elements alone, never a new rule (hashSlots says why).
    hashSlots(weights, HASH_SLOTS).forEach((n, i) => {
      const rs = active[i];
      if (rs !== undefined) slots.push({ from: next, to: next + n - 1, address: canonicalAddress(rs.address), port: rs.port });
      next += n;
    });
  } else {
    active.forEach((rs, i) => {
      const n = (weights[i] ?? 1) / divisor;
      slots.push({ from: next, to: next + n - 1, address: canonicalAddress(rs.address), port: rs.port });
      next += n;
    });
  }
  // Without a map nothing is dispatched: one form for every scheduler, the one the kernel listing reads back.
  const dispatch: NftDispatch = next === 0 ? { kind: 'numgen' } : dispatchFor(spec);
  return { id: spec.id, chain: chainName(match, spec.family), family: spec.family, match, dispatch, mod: next, slots };
}

/** Field-by-field equality of everything that shapes a model (no allocation: this runs 1,000× per apply). */
export function sameSpec(a: ServiceSpec, b: ServiceSpec): boolean {
  if (a.id !== b.id || a.family !== b.family || a.protocol !== b.protocol || a.address !== b.address || a.port !== b.port) return false;
  if (a.fwmark !== b.fwmark || a.scheduler !== b.scheduler || a.onePacket !== b.onePacket) return false;
  if ((a.persistence === undefined) !== (b.persistence === undefined)) return false;
  const fa = a.schedulerFlags ?? [];
  const fb = b.schedulerFlags ?? [];
  if (fa.length !== fb.length || fa.some((f, i) => f !== fb[i])) return false;
  if (a.realServers.length !== b.realServers.length) return false;
  for (let i = 0; i < a.realServers.length; i++) {
    const x = a.realServers[i];
    const y = b.realServers[i];
    if (x === undefined || y === undefined) return false;
    if (x.id !== y.id || x.address !== y.address || x.port !== y.port || x.weight !== y.weight || x.method !== y.method) return false;
  }
  return true;
}

/**
 * Remembers each service's model with the spec it came from, so the next tableModel() rebuilds only the
 * services whose spec changed. Specs are immutable once handed over (types.ts, Dataplane): the spec object
 * of the last build settles an unchanged service by identity, and sameSpec only runs for a spec that is a
 * new object (a director that builds every spec afresh pays that walk; one that keeps them does not).
 */
export class ModelCache {
  /**
   * `parent`: another cache whose models this one takes for the very same spec objects instead of modelling
   * them again (shards.ts: its check of the whole table has just modelled every shard's services).
   */
  constructor(private readonly parent?: ModelCache) {}
  /** Kept in place from build to build (a second map per build was most of an unchanged table's cost). */
  private entries = new Map<string, { spec: ServiceSpec; svc: NftService; build: number }>();
  private build = 1;
  /** Entries this build used: when they are all of them, commit() has nothing to forget. */
  private used = 0;
  /** What this build replaced, for discard(). */
  private undo: [string, { spec: ServiceSpec; svc: NftService; build: number } | undefined][] = [];
  model(spec: ServiceSpec): NftService {
    const had = this.entries.get(spec.id);
    if (had !== undefined && (had.spec === spec || sameSpec(had.spec, spec))) {
      // The newest equal object, so that a caller which keeps it from now on meets `===`.
      had.spec = spec;
      if (had.build !== this.build) {
        had.build = this.build;
        this.used++;
      }
      return had.svc;
    }
    const svc = this.parent?.sameObject(spec) ?? serviceModel(spec);
    if (had === undefined || had.build !== this.build) this.used++;
    this.undo.push([spec.id, had]);
    this.entries.set(spec.id, { spec, svc, build: this.build });
    return svc;
  }
  /** Called after a table is built: what was not used this time is forgotten. */
  commit(): void {
    if (this.used !== this.entries.size) {
      for (const [id, e] of this.entries) if (e.build !== this.build) this.entries.delete(id);
    }
    this.next();
  }
  /** The model of `spec` when this cache holds it for that very object (no comparison: a miss costs nothing). */
  sameObject(spec: ServiceSpec): NftService | undefined {
    const had = this.entries.get(spec.id);
    return had?.spec === spec ? had.svc : undefined;
  }
  /** The model of service `id` as the last committed build made it. */
  held(id: string): NftService | undefined {
    return this.entries.get(id)?.svc;
  }
  /** Called after a build that modelled only the changed services (changed.ts): the others stay, `gone` go. */
  commitChanged(gone: Iterable<string>): void {
    for (const id of gone) this.entries.delete(id);
    this.next();
  }
  /** Forget this build (it failed). */
  discard(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) {
      const [id, old] = this.undo[i] ?? [];
      if (id === undefined) continue;
      if (old === undefined) this.entries.delete(id);
      else this.entries.set(id, old);
    }
    this.next();
  }
  private next(): void {
    this.build++;
    this.used = 0;
    this.undo = [];
  }
}

export function tableModel(desired: DesiredTable, opts: ModelOptions = {}, cache?: ModelCache): NftTableModel {
  const services = new Map<string, NftService>();
  for (const spec of desired.services) {
    const svc = cache === undefined ? serviceModel(spec) : cache.model(spec);
    const clash = services.get(svc.chain);
    if (clash !== undefined) throw new UnsupportedByDataplane('nftables', spec.id, `same address, protocol and port as ${clash.id}`);
    services.set(svc.chain, svc);
  }
  return { table: opts.table ?? DEFAULT_TABLE, masquerade: opts.masquerade ?? false, services, live: new Map() };
}

const prints = new WeakMap<NftService, string>();

/** A string that is equal for two services exactly when their data paths are (the id is a label, left out). */
export function fingerprint(svc: NftService): string {
  let fp = prints.get(svc);
  if (fp === undefined) {
    const m = svc.match.kind === 'fwmark' ? `m${svc.match.mark}` : `${svc.match.protocol} ${svc.match.address} ${svc.match.port}`;
    const d = svc.dispatch.kind === 'numgen' ? 'n' : `j${svc.dispatch.seed} ${svc.dispatch.fields.join('.')}`;
    let slots = '';
    for (const s of svc.slots) slots += `${s.from}-${s.to}>${s.address} ${s.port},`;
    fp = `${svc.chain}|${svc.family}|${m}|${d}|${svc.mod}|${slots}`;
    prints.set(svc, fp);
  }
  return fp;
}

/** Equality of what matters to the data path. Slots are kept sorted by `from` by the model and the parser. */
export function sameService(a: NftService, b: NftService): boolean {
  return a === b || fingerprint(a) === fingerprint(b);
}
