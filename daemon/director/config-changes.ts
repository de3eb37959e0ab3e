// Turns the config module's diff into the flat change list the API and the panel show.
import type { ConfigDiff, SetDiff } from '../config/diff.js';
import type { ConfigChange } from './port.js';
import { partFor } from './reload-parts.js';

function set<T>(kind: ConfigChange['kind'], d: SetDiff<T>, name: (t: T) => string, prefix: string, out: ConfigChange[]): void {
  for (const t of d.added) out.push({ kind, change: 'added', name: prefix + name(t) });
  for (const t of d.removed) out.push({ kind, change: 'removed', name: prefix + name(t) });
  for (const c of d.changed) out.push({ kind, change: 'changed', name: prefix + c.key, detail: c.fields.join(', ') });
}

export function configChanges(d: ConfigDiff): ConfigChange[] {
  const out: ConfigChange[] = d.settings.map((s) => (partFor(s) === undefined ? { kind: 'setting', change: 'changed', name: s, restart: true } : { kind: 'setting', change: 'changed', name: s }));
  set('instance', d.instances, (i) => i.name, '', out);
  set('syncGroup', d.syncGroups, (g) => g.name, '', out);
  set('setting', d.scripts, (s) => s.name, 'vrrp.scripts.', out);
  for (const v of d.virtualServers.added) out.push({ kind: 'service', change: 'added', name: v.id });
  for (const v of d.virtualServers.removed) out.push({ kind: 'service', change: 'removed', name: v.id });
  for (const c of d.virtualServers.changed) {
    if (c.fields.length > 0) out.push({ kind: 'service', change: 'changed', name: c.key, detail: c.fields.join(', ') });
    set('realServer', c.realServers, (r) => r.id, `${c.key}/`, out);
  }
  return out;
}
