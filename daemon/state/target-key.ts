// The one key for "a virtual server, or one real server of it": `VS` or `VS/RS` (their config ids). Operator
// overrides in the state file, the health monitor's target ids and the director's tables all use it, so it is
// built and parsed here and nowhere else.

/** A whole virtual server (realServer absent) or one of its real servers. */
export interface OverrideTarget {
  service: string;
  realServer?: string;
}

export function targetKey(t: OverrideTarget): string {
  return t.realServer === undefined ? t.service : `${t.service}/${t.realServer}`;
}

/** The inverse of targetKey: a virtual server id holds no "/", so the first one splits. */
export function parseTargetKey(key: string): OverrideTarget {
  const i = key.indexOf('/');
  return i < 0 ? { service: key } : { service: key.slice(0, i), realServer: key.slice(i + 1) };
}
