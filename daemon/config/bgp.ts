// The bgp section: its cross-field rules (semantic) and its normalised form. One file owns the section, so
// "which virtual servers does a prefix follow" has one definition (`followed`), used by both.
import { parseCidr, parseDuration } from './formats.js';
import type { Issue, PathSegment } from './errors.js';
import type { ConfigFile } from './schema.js';
import type { BgpConfig } from './types.js';

type BgpFile = NonNullable<ConfigFile['bgp']>;
type AnnouncementFile = BgpFile['announce'][number];

/** A virtual server as the bgp section refers to it: its canonical id, its name, its address. */
export interface VirtualServerRef {
  id: string;
  name?: string | undefined;
  address?: string | undefined;
}

/** "192.0.2.10" → "192.0.2.10/32"; a prefix keeps its length. */
export function withLength(prefix: string): string {
  const c = parseCidr(prefix);
  return c === undefined ? prefix : `${c.address}/${String(c.prefix)}`;
}

/**
 * The virtual servers a prefix follows: those named (by id or name), else those on the prefix's address when
 * it is a host route. Returns the ids and the names it could not find.
 */
export function followed(a: AnnouncementFile, services: readonly VirtualServerRef[]): { ids: string[]; unknown: number[] } {
  if (a.virtualServers !== undefined) {
    const ids: string[] = [];
    const unknown: number[] = [];
    a.virtualServers.forEach((ref, j) => {
      const vs = services.find((s) => s.id === ref || s.name === ref);
      if (vs === undefined) unknown.push(j);
      else if (!ids.includes(vs.id)) ids.push(vs.id);
    });
    return { ids, unknown };
  }
  const c = parseCidr(a.prefix);
  const host = c !== undefined && c.prefix === (c.family === 4 ? 32 : 128);
  return { ids: host ? services.filter((s) => s.address === c.address).map((s) => s.id) : [], unknown: [] };
}

export function checkBgp(bgp: BgpFile, services: readonly VirtualServerRef[]): Issue[] {
  const errors: Issue[] = [];
  const seen = new Map<string, number>();
  bgp.announce.forEach((a, i) => {
    const at = (...rest: PathSegment[]): PathSegment[] => ['bgp', 'announce', i, ...rest];
    const prefix = withLength(a.prefix);
    const prev = seen.get(prefix);
    if (prev !== undefined) errors.push({ path: at('prefix'), message: `duplicate prefix ${prefix} (also bgp.announce[${String(prev)}])` });
    else seen.set(prefix, i);
    const f = followed(a, services);
    for (const j of f.unknown) errors.push({ path: at('virtualServers', j), message: `unknown virtual server "${a.virtualServers?.[j] ?? ''}" (an id such as tcp:192.0.2.10:443, or a name)` });
    if (a.virtualServers === undefined && f.ids.length === 0) {
      errors.push({ path: at('prefix'), message: `no virtual server is on ${prefix}: name the virtual servers whose quorum decides this announcement (virtualServers)` });
    }
    (a.communities ?? []).forEach((c, j) => {
      if (c.split(':').some((n) => Number(n) > 65535)) errors.push({ path: at('communities', j), message: `community ${c}: both halves must be 0..65535` });
    });
  });
  return errors;
}

export function bgpConfig(bgp: BgpFile, services: readonly VirtualServerRef[]): BgpConfig {
  const ms = (v: string | number | undefined, dflt: number): number => (v === undefined ? dflt : (parseDuration(v) ?? dflt));
  return {
    speaker: bgp.speaker ?? 'bird',
    socket: bgp.socket ?? '/run/bird/bird.ctl',
    configFile: bgp.configFile ?? '/etc/bird/lvsd.conf',
    configureTimeoutMs: ms(bgp.configureTimeout, 30_000),
    drainOnStopMs: ms(bgp.drainOnStop, 5_000),
    announce: bgp.announce.map((a) => ({
      prefix: withLength(a.prefix),
      virtualServers: followed(a, services).ids,
      communities: (a.communities ?? []).map((c) => c.split(':').map(Number) as [number, number]),
    })),
  };
}
