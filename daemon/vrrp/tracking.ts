// Tracking → effective priority and fault, with keepalived's rules. Pure.
//   weight 0: the tracked object failing puts the instance in FAULT;
//   weight > 0: added to the priority while the object is OK;
//   weight < 0: added (so subtracted) while the object is failing.
// track_file: the file's integer × weight is added; with weight 0 a non-zero value means FAULT.
// The result stays in 1..254; an address owner (255) keeps 255 (keepalived does not move owners).

export interface TrackedState {
  kind: 'interface' | 'script' | 'file' | 'process';
  name: string;
  weight: number;
  /** interface up / script passing; for files: unused. */
  ok: boolean;
  /** track_file value. */
  value?: number;
  /** track_process reverse: failing while `ok`, and the other way round. */
  reverse?: boolean;
}

export interface TrackingResult {
  priority: number;
  fault: boolean;
  /** Why it is in FAULT, e.g. ["interface eth1 down"]. */
  reasons: string[];
}

export function applyTracking(base: number, items: TrackedState[]): TrackingResult {
  let delta = 0;
  const reasons: string[] = [];
  for (const t of items) {
    if (t.kind === 'file') {
      const v = t.value ?? 0;
      if (t.weight === 0) {
        if (v !== 0) reasons.push(`file ${t.name} holds ${v}`);
      } else {
        delta += v * t.weight;
      }
      continue;
    }
    const what = t.kind === 'interface' ? `interface ${t.name} down` : t.kind === 'process' ? `process ${t.name} ${t.reverse === true ? 'quorum held (reverse)' : 'quorum lost'}` : `script ${t.name} failing`;
    const ok = t.reverse === true ? !t.ok : t.ok;
    if (t.weight === 0) {
      if (!ok) reasons.push(what);
    } else if (t.weight > 0 && ok) delta += t.weight;
    else if (t.weight < 0 && !ok) delta += t.weight;
  }
  const priority = base === 255 ? 255 : Math.max(1, Math.min(254, base + delta));
  return { priority, fault: reasons.length > 0, reasons };
}

/** The latest result of a track script, file or process, by `kind:name` (what an instance starts from). */
export interface TrackResult {
  ok: boolean;
  value?: number;
  disabled?: boolean;
}

/** What trackedFor reads of an instance's options. */
interface TrackedOptions {
  trackInterfaces: readonly { name: string; weight: number }[];
  trackScripts: readonly { name: string; weight: number }[];
  trackFiles: readonly { path: string; weight: number }[];
  trackProcesses: readonly { name: string; weight: number; reverse: boolean }[];
}

/**
 * The tracked objects of an instance with their current state: kept from `previous` where the same
 * object was tracked already, else the link state / last track result. Scripts count as passing until
 * their first result; files as 0 until read (keepalived alike).
 */
export function trackedFor(o: TrackedOptions, linkUp: (name: string) => boolean, results: ReadonlyMap<string, TrackResult>, previous?: ReadonlyMap<string, TrackedState>): Map<string, TrackedState> {
  const out = new Map<string, TrackedState>();
  const keep = (key: string, fresh: TrackedState): void => {
    const p = previous?.get(key);
    out.set(key, p === undefined ? fresh : { ...p, weight: fresh.weight, ...(fresh.reverse !== undefined ? { reverse: fresh.reverse } : {}) });
  };
  for (const t of o.trackInterfaces) keep(`interface:${t.name}`, { kind: 'interface', name: t.name, weight: t.weight, ok: linkUp(t.name) });
  for (const t of o.trackScripts) {
    const r = results.get(`script:${t.name}`);
    if (r?.disabled === true) continue;
    keep(`script:${t.name}`, { kind: 'script', name: t.name, weight: t.weight, ok: r?.ok ?? true });
  }
  for (const t of o.trackFiles) {
    const r = results.get(`file:${t.path}`);
    keep(`file:${t.path}`, { kind: 'file', name: t.path, weight: t.weight, ok: true, value: r?.value ?? 0 });
  }
  // A process tracker counts as OK until the start-up scan says (it comes within milliseconds of the start).
  for (const t of o.trackProcesses) {
    const r = results.get(`process:${t.name}`);
    keep(`process:${t.name}`, { kind: 'process', name: t.name, weight: t.weight, reverse: t.reverse, ok: r?.ok ?? true });
  }
  return out;
}
