// The reconciler: desired table vs the dataplane's actual table → the minimal list of operations.
// Pure and backend-neutral (ipvs today; nftables/userspace can reuse it): it compares identity
// (service id, real-server id) and configuration only, never counters.
//
// Ownership. A dataplane can hold services lvsd did not create (another keepalived, an operator's
// ipvsadm line). lvsd keeps the set of service ids it owns (the backend persists it across restarts);
// the rules are:
//   - a desired service missing from the dataplane is added and becomes owned;
//   - a desired service present and owned is reconciled in place (adopted on restart, never re-created);
//   - a desired service present but NOT owned is left alone and reported as a conflict, unless the
//     desired spec says `takeOver: true` — then it is adopted, reconciled and owned from then on;
//   - an actual service that is owned but no longer desired is deleted;
//   - an actual service that is not owned and not desired is never touched. Nothing is ever flushed.
import type { DesiredTable, RealServerSpec, ServiceSpec } from '../types.js';

export type PlanOp =
  | { kind: 'add-service'; service: ServiceSpec }
  | { kind: 'update-service'; service: ServiceSpec; before: ServiceSpec }
  | { kind: 'delete-service'; service: ServiceSpec }
  | { kind: 'add-real-server'; service: ServiceSpec; realServer: RealServerSpec }
  | { kind: 'update-real-server'; service: ServiceSpec; realServer: RealServerSpec; before: RealServerSpec }
  | { kind: 'delete-real-server'; service: ServiceSpec; realServer: RealServerSpec };

export interface Plan {
  ops: PlanOp[];
  /** Service ids lvsd owns once the plan is applied. */
  owned: Set<string>;
  /** Desired services left alone because something else owns them (ids). */
  conflicts: string[];
}

/** A table whose services may carry extra (observed) fields; only identity + configuration are read. */
export interface TableLike {
  services: readonly ServiceSpec[];
}

const sortedFlags = (s: ServiceSpec): string => [...(s.schedulerFlags ?? [])].sort().join(',');
const sameFlags = (a: ServiceSpec, b: ServiceSpec): boolean =>
  ((a.schedulerFlags?.length ?? 0) === 0 && (b.schedulerFlags?.length ?? 0) === 0) || sortedFlags(a) === sortedFlags(b);

/** Same configuration (identity assumed equal). */
export function sameServiceConfig(a: ServiceSpec, b: ServiceSpec): boolean {
  return (
    a.scheduler === b.scheduler &&
    sameFlags(a, b) &&
    (a.onePacket ?? false) === (b.onePacket ?? false) &&
    a.persistence?.timeoutSec === b.persistence?.timeoutSec &&
    a.persistence?.netmask === b.persistence?.netmask &&
    a.persistence?.engine === b.persistence?.engine
  );
}

function tunnelText(r: RealServerSpec): string {
  if (r.method !== 'tun') return '';
  const t = r.tunnel;
  return `${t?.type ?? 'ipip'}/${t?.port ?? 0}/${t?.checksum ?? 'none'}`;
}

export function sameRealServerConfig(a: RealServerSpec, b: RealServerSpec): boolean {
  return (
    a.weight === b.weight &&
    a.method === b.method &&
    tunnelText(a) === tunnelText(b) &&
    (a.upperThreshold ?? 0) === (b.upperThreshold ?? 0) &&
    (a.lowerThreshold ?? 0) === (b.lowerThreshold ?? 0)
  );
}

const NAME = /^[a-z0-9_-]*$/;

/**
 * A service's identity and configuration as one line of text: two services whose lines are equal are the same to
 * plan() (same id, sameServiceConfig, the same real servers by id each with sameRealServerConfig), so a service the
 * kernel holds whose line equals the desired one's needs nothing. Real servers in the order given (`reversed`: last
 * first, the kernel's order for servers added in the desired order). The native table read writes the same line
 * for each service it reads (daemon/ipvs/native/ipvs_lines.c; test/unit/ipvs-fingerprint.test.ts holds the two
 * together). Undefined for a spec with a scheduler or engine outside [a-z0-9_-], or a newline anywhere, which no
 * kernel line can equal.
 */
export function configText(s: ServiceSpec, reversed = false): string | undefined {
  const engine = s.persistence?.engine;
  if (!NAME.test(s.scheduler) || (engine !== undefined && !NAME.test(engine))) return undefined;
  const persistence = s.persistence === undefined ? '-' : `${s.persistence.timeoutSec}/${s.persistence.netmask}/${engine === undefined ? '' : `=${engine}`}`;
  let out = `${s.id}|${s.scheduler}|${s.schedulerFlags?.join(',') ?? ''}|${s.onePacket === true ? 1 : 0}|${persistence}`;
  const rs = s.realServers;
  for (let i = 0; i < rs.length; i++) {
    const r = rs[reversed ? rs.length - 1 - i : i];
    if (r === undefined) continue;
    // What is nearly always at its default is written only when it is not (less to build, cold, per server).
    out += `|${r.id} ${r.weight} ${r.method}`;
    if (r.method === 'tun') out += ` ${tunnelText(r)}`;
    if ((r.upperThreshold ?? 0) !== 0) out += ` u${r.upperThreshold}`;
    if ((r.lowerThreshold ?? 0) !== 0) out += ` l${r.lowerThreshold}`;
  }
  // One service, one line: a newline inside a name would split it in two where lines are joined.
  return out.includes('\n') ? undefined : out;
}

/** Configuration only: strips observed fields so plans never carry counters. */
function specOf(s: ServiceSpec): ServiceSpec {
  const out: ServiceSpec = { id: s.id, family: s.family, protocol: s.protocol, scheduler: s.scheduler, realServers: [] };
  if (s.address !== undefined) out.address = s.address;
  if (s.port !== undefined) out.port = s.port;
  if (s.fwmark !== undefined) out.fwmark = s.fwmark;
  if (s.schedulerFlags !== undefined && s.schedulerFlags.length > 0) out.schedulerFlags = [...s.schedulerFlags];
  if (s.persistence !== undefined) out.persistence = { ...s.persistence };
  if (s.onePacket === true) out.onePacket = true;
  return out;
}
function rsOf(r: RealServerSpec): RealServerSpec {
  const out: RealServerSpec = { id: r.id, address: r.address, port: r.port, weight: r.weight, method: r.method };
  if (r.tunnel !== undefined && r.method === 'tun') out.tunnel = { ...r.tunnel };
  if (r.upperThreshold !== undefined && r.upperThreshold !== 0) out.upperThreshold = r.upperThreshold;
  if (r.lowerThreshold !== undefined && r.lowerThreshold !== 0) out.lowerThreshold = r.lowerThreshold;
  return out;
}

function duplicates(ids: string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
}

/** The ids of a service's real servers; throws if one is listed twice. */
function checkRealServerIds(want: ServiceSpec): Set<string> {
  const ids = new Set<string>();
  for (const r of want.realServers) ids.add(r.id);
  if (ids.size < want.realServers.length) {
    throw new Error(`service ${want.id} lists real server ${duplicates(want.realServers.map((r) => r.id)).join(', ')} more than once`);
  }
  return ids;
}

/**
 * Whether `have` holds exactly the real servers `want` lists, each configured the same, and `want` lists none
 * twice: a service already right (every service of a restart adopting its table), settled without building an
 * index. The kernel lists a service's destinations newest first, so the mirrored position is tried first.
 */
function settled(want: readonly RealServerSpec[], have: readonly RealServerSpec[]): boolean {
  const n = want.length;
  if (have.length !== n || n > 64) return false;
  for (let i = 0; i < n; i++) {
    const w = want[i];
    if (w === undefined) return false;
    for (let j = 0; j < i; j++) if (want[j]?.id === w.id) return false;
    let h = have[n - 1 - i];
    if (h?.id !== w.id) h = have[i];
    if (h?.id !== w.id) h = have.find((r) => r.id === w.id);
    if (h === undefined || !sameRealServerConfig(w, h)) return false;
  }
  // n distinct ids, each found among the n held: the two lists hold the same servers.
  return true;
}

/** Throws if the desired table lists a service id twice. */
export function checkUniqueServices(desired: TableLike): void {
  const dupes = duplicates(desired.services.map((s) => s.id));
  if (dupes.length > 0) throw new Error(`desired table lists service ${dupes.join(', ')} more than once`);
}

export function plan(desired: TableLike, actual: TableLike, owned: ReadonlySet<string>): Plan {
  checkUniqueServices(desired);
  const actualById = new Map(actual.services.map((s) => [s.id, s]));
  const desiredIds = new Set(desired.services.map((s) => s.id));
  const ops: PlanOp[] = [];
  const nextOwned = new Set<string>();
  const conflicts: string[] = [];

  for (const want of desired.services) {
    // The configuration-only copy, made once an operation needs it: a service already right (every service
    // of a restart adopting its table) costs no copy.
    let spec: ServiceSpec | undefined;
    const svc = (): ServiceSpec => (spec ??= specOf(want));
    const have = actualById.get(want.id);
    if (have === undefined) {
      checkRealServerIds(want);
      const s = svc();
      ops.push({ kind: 'add-service', service: s });
      for (const r of want.realServers) ops.push({ kind: 'add-real-server', service: s, realServer: rsOf(r) });
      nextOwned.add(want.id);
      continue;
    }
    if (!owned.has(want.id) && want.takeOver !== true) {
      checkRealServerIds(want);
      conflicts.push(want.id);
      continue;
    }
    nextOwned.add(want.id);
    const sameConfig = sameServiceConfig(want, have);
    if (sameConfig && settled(want.realServers, have.realServers)) continue;
    const wantIds = checkRealServerIds(want);
    if (!sameConfig) ops.push({ kind: 'update-service', service: svc(), before: specOf(have) });
    const haveRs = new Map(have.realServers.map((r) => [r.id, r]));
    for (const r of have.realServers) {
      if (!wantIds.has(r.id)) ops.push({ kind: 'delete-real-server', service: svc(), realServer: rsOf(r) });
    }
    for (const r of want.realServers) {
      const cur = haveRs.get(r.id);
      if (cur === undefined) ops.push({ kind: 'add-real-server', service: svc(), realServer: rsOf(r) });
      else if (!sameRealServerConfig(r, cur)) ops.push({ kind: 'update-real-server', service: svc(), realServer: rsOf(r), before: rsOf(cur) });
    }
  }
  for (const have of actual.services) {
    if (!desiredIds.has(have.id) && owned.has(have.id)) ops.push({ kind: 'delete-service', service: specOf(have) });
  }
  return { ops, owned: nextOwned, conflicts };
}

/** The table a dataplane holds after `ops` (a model of the kernel, for tests and dry runs). */
export function applyPlan(actual: TableLike, ops: readonly PlanOp[]): DesiredTable {
  const table = new Map<string, ServiceSpec>(actual.services.map((s) => [s.id, { ...specOf(s), realServers: s.realServers.map(rsOf) }]));
  const get = (id: string): ServiceSpec => {
    const s = table.get(id);
    if (s === undefined) throw new Error(`plan refers to service ${id}, which the table does not hold`);
    return s;
  };
  for (const op of ops) {
    switch (op.kind) {
      case 'add-service':
        if (table.has(op.service.id)) throw new Error(`add-service ${op.service.id}: already exists`);
        table.set(op.service.id, { ...specOf(op.service), realServers: [] });
        break;
      case 'update-service':
        table.set(op.service.id, { ...specOf(op.service), realServers: get(op.service.id).realServers });
        break;
      case 'delete-service':
        get(op.service.id);
        table.delete(op.service.id);
        break;
      case 'add-real-server': {
        const s = get(op.service.id);
        if (s.realServers.some((r) => r.id === op.realServer.id)) throw new Error(`add-real-server ${op.realServer.id}: already exists`);
        s.realServers.push(rsOf(op.realServer));
        break;
      }
      case 'update-real-server': {
        const s = get(op.service.id);
        const i = s.realServers.findIndex((r) => r.id === op.realServer.id);
        if (i < 0) throw new Error(`update-real-server ${op.realServer.id}: no such real server`);
        s.realServers[i] = rsOf(op.realServer);
        break;
      }
      case 'delete-real-server': {
        const s = get(op.service.id);
        const before = s.realServers.length;
        s.realServers = s.realServers.filter((r) => r.id !== op.realServer.id);
        if (s.realServers.length === before) throw new Error(`delete-real-server ${op.realServer.id}: no such real server`);
        break;
      }
    }
  }
  return { services: [...table.values()] };
}

export function opText(op: PlanOp): string {
  switch (op.kind) {
    case 'add-service':
    case 'update-service':
    case 'delete-service':
      return `${op.kind} ${op.service.id}`;
    default:
      return `${op.kind} ${op.service.id} → ${op.realServer.id}`;
  }
}
