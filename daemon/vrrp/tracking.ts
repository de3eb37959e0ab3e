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
