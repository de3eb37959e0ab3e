// What a reload touches: the parts a config difference reaches, and which changed settings a reload applies to
// the running daemon, by which part. Every setting not listed in LIVE takes effect at the next restart (the API
// listener, the state file, the dataplane's choice and its construction options), and a reload says so in its
// answer, the log, lastReload and the panel, rather than reporting it as applied. Listing is the safe default:
// a new setting waits for a restart until a reload part learns to apply it.
import type { ConfigDiff } from '../config/diff.js';

export type ReloadPart = 'health' | 'vrrp' | 'dataplane' | 'bgp';

/**
 * The order parts are applied in: checks first (new real servers count as up until checked), the VIPs, the
 * table, and the BGP announcements last (a prefix is announced only once the table behind it is in place).
 */
export const RELOAD_ORDER: readonly ReloadPart[] = ['health', 'vrrp', 'dataplane', 'bgp'];

/** Setting path (and everything below it) → the reload part that applies it (null: read live, nothing to do). */
const LIVE: readonly (readonly [string, ReloadPart | null])[] = [
  ['node', null], // the snapshot reads it
  ['vrrp', 'vrrp'], // vrrp.garp.*: the engine's reconfigure
  ['ipvs.syncDaemon', 'vrrp'], // the sync daemon follows the VRRP role (vrrp-supervisor.ts)
  ['ipvs.timeouts', 'dataplane'],
  ['ipvs.removal', 'dataplane'],
  ['ipvs.drainTimeoutMs', 'dataplane'],
  ['bgp', 'bgp'], // BIRD's configure check / timeout / confirm (bgp-supervisor.ts)
  ['alerts', null], // the mail supervisor reads the running config at each alert (mail-supervisor.ts)
  ['cluster', null], // the API reads the running config's cluster section (api/cluster/running.ts)
];

const under = (setting: string, prefix: string): boolean => setting === prefix || setting.startsWith(`${prefix}.`);

/** The part that applies `setting`; undefined when it takes effect at restart only. */
export function partFor(setting: string): ReloadPart | null | undefined {
  return LIVE.find(([prefix]) => under(setting, prefix))?.[1];
}

/** The changed settings that wait for a restart. */
export function restartSettings(settings: readonly string[]): string[] {
  return settings.filter((s) => partFor(s) === undefined);
}

/** The parts a config difference touches (health and dataplane follow the virtual servers; settings, LIVE above). */
export function partsToReload(diff: ConfigDiff): ReloadPart[] {
  const size = (s: { added: unknown[]; removed: unknown[]; changed: unknown[] }): number => s.added.length + s.removed.length + s.changed.length;
  const services = size(diff.virtualServers) > 0;
  const bySettings = new Set(diff.settings.map(partFor));
  const vrrp = size(diff.instances) + size(diff.syncGroups) + size(diff.scripts) > 0 || bySettings.has('vrrp');
  // bgp: its section only (a prefix's virtual servers are in it, normalised); quorum changes are live events.
  const wanted = { health: services, vrrp, dataplane: services || bySettings.has('dataplane'), bgp: bySettings.has('bgp') };
  return RELOAD_ORDER.filter((p) => wanted[p]);
}
