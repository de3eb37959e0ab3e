// String formats of the config file: addresses, CIDR, host:port, durations. One place for the
// checks, used by the schema validator (registered as JSON Schema formats) and by the normaliser.
import { isIPv4, isIPv6 } from 'node:net';
import Format from 'typebox/format';

export type AddressFamily = 4 | 6;

/** 4 or 6 for a literal IP address (no zone, no brackets), else undefined. */
export function ipFamily(s: string): AddressFamily | undefined {
  if (isIPv4(s)) return 4;
  if (!s.includes('%') && isIPv6(s)) return 6;
  return undefined;
}

export interface Cidr {
  address: string;
  prefix: number;
  family: AddressFamily;
}

/** "192.0.2.1/24", "2001:db8::1/64", or a bare address (host prefix: /32 or /128). */
export function parseCidr(s: string): Cidr | undefined {
  const slash = s.indexOf('/');
  const addr = slash < 0 ? s : s.slice(0, slash);
  const family = ipFamily(addr);
  if (family === undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  if (slash < 0) return { address: addr, prefix: max, family };
  const p = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(p)) return undefined;
  const prefix = Number(p);
  if (prefix > max) return undefined;
  return { address: addr, prefix, family };
}

export interface HostPort {
  host: string;
  port: number;
}

/** "127.0.0.1:9180", "[::1]:9180", "localhost:9180". */
export function parseHostPort(s: string): HostPort | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const host = m[1] ?? m[2] ?? '';
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  if (m[1] !== undefined && ipFamily(host) !== 6) return undefined;
  if (m[2] !== undefined && ipFamily(host) === undefined && !/^[A-Za-z0-9.-]+$/.test(host)) return undefined;
  return { host, port };
}

/** Durations: "250ms", "1s", "1.5s", "2m", "1h", "1d", or a bare number = seconds (as keepalived). */
export const DURATION_PATTERN = '^[0-9]+(\\.[0-9]+)?(ms|s|m|h|d)?$';
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The longest duration: 24 days. Every duration ends up in a timer, and Node fires a timer longer than 2^31-1 ms
 * (24.8 days) after 1 ms with only a warning: `drainTimeout: 30d` deleted a draining real server at once, and a
 * health check `interval: 1e9s` ran every millisecond.
 */
export const MAX_DURATION_MS = 24 * 86_400_000;

/**
 * The longest IPVS timeout (connection timeouts, persistence): 31 days, keepalived's LVS_MAX_TIMEOUT. The kernel
 * counts these, not a Node timer, so an imported keepalived.conf keeps what keepalived accepts.
 */
export const MAX_KERNEL_DURATION_MS = 31 * 86_400_000;

/** Milliseconds for a duration (rounded to whole ms), undefined when it is not one. */
export function parseDuration(v: string | number): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.round(v * 1000) : undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(v);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (UNIT_MS[m[2] ?? 's'] ?? 1000));
}

/** Formats the schema uses; names are what editors see in the exported JSON Schema. */
export const FORMATS = {
  /** An IPv4 or IPv6 address. */
  ip: (s: string) => ipFamily(s) !== undefined,
  /** A duration's text form within MAX_DURATION_MS (the pattern says what it looks like). */
  'lvsd-duration': (s: string) => (parseDuration(s) ?? Infinity) <= MAX_DURATION_MS,
  /** An IPVS timeout's text form within MAX_KERNEL_DURATION_MS. */
  'lvsd-kernel-duration': (s: string) => (parseDuration(s) ?? Infinity) <= MAX_KERNEL_DURATION_MS,
  ipv4: (s: string) => ipFamily(s) === 4,
  /** An address with an optional /prefix. */
  cidr: (s: string) => parseCidr(s) !== undefined,
  'host-port': (s: string) => parseHostPort(s) !== undefined,
} as const;

export type FormatName = keyof typeof FORMATS;

/** What an operator reads when a value does not have the format. */
export const FORMAT_MESSAGES: Record<FormatName, string> = {
  ip: 'is not an IP address (IPv4 like 192.0.2.1 or IPv6 like 2001:db8::1)',
  'lvsd-duration': 'is longer than 24d, the longest a timer waits',
  'lvsd-kernel-duration': 'is longer than 31d, the longest IPVS timeout (keepalived\'s LVS_MAX_TIMEOUT)',
  ipv4: 'is not an IPv4 address',
  cidr: 'is not an address or CIDR (e.g. 192.0.2.10/24 or 2001:db8::10/64)',
  'host-port': 'is not host:port (e.g. 127.0.0.1:9180 or [::1]:9180)',
};

let registered = false;
/** Registers the formats with TypeBox's validator (idempotent). */
export function registerFormats(): void {
  if (registered) return;
  for (const [name, check] of Object.entries(FORMATS)) Format.Set(name, check);
  registered = true;
}
