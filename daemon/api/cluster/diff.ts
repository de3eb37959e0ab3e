// What disagrees between directors, decided in one pure function: the Cluster page and its tests read
// the same list. Directors of one pair are matched by VRRP instance name and by virtual server id (the
// names operators give both configs); a difference names its subject as a key the panel highlights by
// ("instance:VI_1", "service:tcp:192.0.2.10:80", "realServer:tcp:192.0.2.10:80/10.0.1.11:80", "vrid:4:51",
// "config") and the directors it concerns.
import type { DirectorSnapshot, VrrpInstanceSnapshot } from '../../director/snapshot.js';

export interface ClusterMember {
  snapshot: DirectorSnapshot;
  /** Per VRRP instance name: "none", or the auth type and a short digest of its secret (cluster/running.ts). */
  vrrpAuth: Record<string, string>;
}

export type DifferenceKind =
  | 'config-hash'
  | 'instance-set'
  | 'vrid'
  | 'vips'
  | 'auth'
  | 'priority-tie'
  | 'priority-order'
  | 'two-masters'
  | 'service-set'
  | 'service'
  | 'real-server-set'
  | 'health';

export interface Difference {
  kind: DifferenceKind;
  subject: string;
  /** For people: "VRID 51 on lb1, 52 on lb2". */
  detail: string;
  directors: string[];
}

interface Named {
  name: string;
  member: ClusterMember;
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join('\0') === [...b].sort().join('\0');

/** "51 on lb1, 52 on lb2", grouping directors that agree. */
function per<T>(rows: readonly { name: string; v: T }[], show: (v: T) => string): string {
  return [...byKey(rows, (r) => show(r.v))].map(([k, group]) => `${k} on ${group.map((r) => r.name).join(', ')}`).join('; ');
}

/** Each key that some directors have and others lack, with who has it. */
function setGaps(all: readonly Named[], keysOf: (m: ClusterMember) => string[]): { key: string; have: string[]; lack: string[] }[] {
  // A Set per key: a key a peer lists many times costs no more than once, and does not stand in for a director that lacks it.
  const have = new Map<string, Set<string>>();
  for (const d of all) {
    for (const k of keysOf(d.member)) {
      const names = have.get(k);
      if (names === undefined) have.set(k, new Set([d.name]));
      else names.add(d.name);
    }
  }
  const out = [];
  for (const [key, names] of have) {
    if (names.size < all.length) out.push({ key, have: [...names], lack: all.map((d) => d.name).filter((n) => !names.has(n)) });
  }
  return out;
}

/** Items by key, in order: one pass, where filtering the whole list per key was quadratic in a big peer's servers. */
function byKey<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const t of items) append(m, key(t), t);
  return m;
}

/** Adds `v` to the list at `k` in place (a copy per append is quadratic when a peer repeats a name). */
function append<V>(m: Map<string, V[]>, k: string, v: V): void {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
}

function instanceDifferences(all: readonly Named[]): Difference[] {
  const out: Difference[] = [];
  for (const g of setGaps(all, (m) => m.snapshot.vrrp.map((i) => i.name))) {
    out.push({ kind: 'instance-set', subject: `instance:${g.key}`, detail: `VRRP instance ${g.key} is on ${g.have.join(', ')} but not on ${g.lack.join(', ')}`, directors: all.map((d) => d.name) });
  }
  const byName = new Map<string, { name: string; v: VrrpInstanceSnapshot; auth: string }[]>();
  for (const d of all) {
    for (const i of d.member.snapshot.vrrp) append(byName, i.name, { name: d.name, v: i, auth: d.member.vrrpAuth[i.name] ?? 'unknown' });
  }
  for (const [name, rows] of byName) {
    if (rows.length < 2) continue;
    const subject = `instance:${name}`;
    const directors = rows.map((r) => r.name);
    if (new Set(rows.map((r) => r.v.vrid)).size > 1) out.push({ kind: 'vrid', subject, detail: `${name}: VRID ${per(rows, (v) => String(v.vrid))}`, directors });
    if (rows.some((r) => !sameSet(r.v.vips, rows[0]?.v.vips ?? []))) out.push({ kind: 'vips', subject, detail: `${name}: VIPs ${per(rows, (v) => v.vips.join(' ') || 'none')}`, directors });
    if (new Set(rows.map((r) => r.auth)).size > 1) {
      out.push({ kind: 'auth', subject, detail: `${name}: authentication ${per(rows.map((r) => ({ name: r.name, v: r.auth })), (a) => a)}`, directors });
    }
    const prios = rows.map((r) => r.v.basePriority);
    if (new Set(prios).size < prios.length) {
      out.push({ kind: 'priority-tie', subject, detail: `${name}: directors share a priority (${per(rows, (v) => String(v.basePriority))}); the higher address wins, not the config`, directors });
    }
  }
  out.push(...priorityOrder(all, byName));
  return out;
}

/** Instances of one sync group must rank the directors alike, or the group's masters split across them. */
function priorityOrder(all: readonly Named[], byName: Map<string, { name: string; v: VrrpInstanceSnapshot }[]>): Difference[] {
  const groups = new Map<string, Set<string>>();
  for (const d of all) {
    for (const i of d.member.snapshot.vrrp) {
      if (i.syncGroup === null) continue;
      const names = groups.get(i.syncGroup);
      if (names === undefined) groups.set(i.syncGroup, new Set([i.name]));
      else names.add(i.name);
    }
  }
  const out: Difference[] = [];
  for (const [group, names] of groups) {
    const orders = [...names].map((n) => ({
      name: n,
      v: [...(byName.get(n) ?? [])].sort((a, b) => b.v.basePriority - a.v.basePriority).map((r) => r.name),
    })).filter((o) => o.v.length > 1);
    if (new Set(orders.map((o) => o.v.join('>'))).size > 1) {
      out.push({
        kind: 'priority-order',
        subject: `syncGroup:${group}`,
        detail: `sync group ${group}: the instances rank the directors differently (${per(orders, (v) => v.join(' > '))})`,
        directors: all.map((d) => d.name),
      });
    }
  }
  return out;
}

function mastersDifferences(all: readonly Named[]): Difference[] {
  const masters = new Map<string, { name: string; v: VrrpInstanceSnapshot }[]>();
  for (const d of all) {
    for (const i of d.member.snapshot.vrrp) {
      if (i.state !== 'MASTER') continue;
      append(masters, `vrid:${i.family}:${i.vrid}`, { name: d.name, v: i });
    }
  }
  const out: Difference[] = [];
  for (const [subject, rows] of masters) {
    if (rows.length < 2) continue;
    const v = rows[0]?.v;
    out.push({ kind: 'two-masters', subject, detail: `VRID ${v?.vrid ?? '?'} (IPv${v?.family ?? '?'}) is MASTER on ${rows.map((r) => `${r.name} (${r.v.name})`).join(' and ')}`, directors: rows.map((r) => r.name) });
  }
  return out;
}

function serviceDifferences(all: readonly Named[]): Difference[] {
  const out: Difference[] = [];
  for (const g of setGaps(all, (m) => m.snapshot.virtualServices.map((s) => s.id))) {
    out.push({ kind: 'service-set', subject: `service:${g.key}`, detail: `virtual server ${g.key} is on ${g.have.join(', ')} but not on ${g.lack.join(', ')}`, directors: all.map((d) => d.name) });
  }
  const services = all.map((d) => ({ name: d.name, byId: byKey(d.member.snapshot.virtualServices, (s) => s.id) }));
  const ids = new Set(services.flatMap((d) => [...d.byId.keys()]));
  for (const id of ids) {
    const rows = services.flatMap((d) => (d.byId.get(id) ?? []).map((s) => ({ name: d.name, v: s })));
    if (rows.length < 2) continue;
    const subject = `service:${id}`;
    const directors = rows.map((r) => r.name);
    const shape = (s: (typeof rows)[number]['v']): string => `${s.scheduler}/${s.method}`;
    if (new Set(rows.map((r) => shape(r.v))).size > 1) out.push({ kind: 'service', subject, detail: `${id}: scheduler/method ${per(rows, shape)}`, directors });
    const rsNamed = rows.map((r) => ({ name: r.name, byId: byKey(r.v.realServers, (x) => x.id) }));
    const allRs = new Set(rsNamed.flatMap((r) => [...r.byId.keys()]));
    for (const rs of allRs) {
      const have = rsNamed.filter((r) => r.byId.has(rs)).map((r) => r.name);
      if (have.length < rows.length) {
        out.push({ kind: 'real-server-set', subject: `realServer:${id}/${rs}`, detail: `${id}: real server ${rs} is on ${have.join(', ')} but not on ${directors.filter((n) => !have.includes(n)).join(', ')}`, directors });
      }
      const status = rsNamed.flatMap((r) => (r.byId.get(rs) ?? []).map((x) => ({ name: r.name, v: x.health.status })));
      if (status.some((s) => s.v === 'up') && status.some((s) => s.v === 'down')) {
        out.push({ kind: 'health', subject: `realServer:${id}/${rs}`, detail: `${id}: real server ${rs} is ${per(status, (s) => s)}`, directors: status.map((s) => s.name) });
      }
    }
  }
  return out;
}

/** Everything that disagrees between the reachable directors (fewer than two: nothing to compare). */
export function clusterDifferences(directors: readonly Named[]): Difference[] {
  if (directors.length < 2) return [];
  const out: Difference[] = [];
  const hashes = directors.map((d) => ({ name: d.name, v: d.member.snapshot.config.hash }));
  if (new Set(hashes.map((h) => h.v)).size > 1) {
    out.push({ kind: 'config-hash', subject: 'config', detail: `config sha256 ${per(hashes, (h) => h.slice(0, 12))}`, directors: directors.map((d) => d.name) });
  }
  return [...out, ...instanceDifferences(directors), ...mastersDifferences(directors), ...serviceDifferences(directors)];
}
