// The typed options of one health check, as the director hands them over (the config loader maps
// the YAML `healthCheck` section onto this: durations become milliseconds, names stay the same).
import type { RiseFallOptions } from './rise-fall.js';

export type CheckType = 'tcp' | 'http' | 'https' | 'udp' | 'dns' | 'smtp' | 'ping' | 'file' | 'exec' | 'agent' | 'none';

export interface HttpCheckOptions {
  /** Request path (default "/"). */
  path?: string;
  /** Accepted statuses: numbers or "200-299" ranges (default [200-299]). */
  status?: readonly (number | string)[];
  /** Host header (default: the connect address, with the port when it is not 80/443). */
  host?: string;
  /** JavaScript regular expression the body must match. */
  bodyRegex?: string;
  /** Its flags (i, m, s), inverted (keepalived regex_no_match), and where the match may start in the body. */
  bodyRegexFlags?: string;
  bodyRegexNoMatch?: boolean;
  bodyRegexMinOffset?: number;
  bodyRegexMaxOffset?: number;
  /** keepalived http_protocol (default 1.1): HTTP/1.0 without Connection, 1.0 with Connection: close, 1.1 with it. */
  protocol?: '1.0' | '1.0C' | '1.1';
  /** Expected md5 of the body, lowercase hex (keepalived `digest`). */
  digest?: string;
  headers?: Readonly<Record<string, string>>;
  /** https only: verify the certificate chain and name (default false, as keepalived). */
  tlsVerify?: boolean;
  /** https only: SNI server name (default: `host` when it is a name). */
  sni?: string;
  /** https only: PEM CA bundle used when tlsVerify is on (default: the system store). */
  ca?: string;
  /** https only: the client certificate presented to the server (keepalived's SSL block). */
  clientCertificate?: { certificate: string; key: string; password?: string };
}

export interface UdpCheckOptions {
  /** Datagram to send, hex (default: empty datagram). */
  payload?: string;
  /** Expected reply: exact bytes (hex) or a regex over the reply read as latin1. Absent = any reply. */
  expect?: { hex: string } | { regex: string };
  /**
   * Whether a reply is needed. Default: true when `expect` is set. Without it the check passes when no
   * ICMP port-unreachable came back within `quietMs` (keepalived UDP_CHECK without require_reply).
   */
  requireReply?: boolean;
  /** With a reply: the fewest and most bytes it may have (keepalived min_reply_length / max_reply_length). */
  minReplyLength?: number;
  maxReplyLength?: number;
  /** How long to wait for an ICMP error when no reply is required (default min(timeout/2, 500 ms)). */
  quietMs?: number;
}

export type DnsRcodeName = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface DnsCheckOptions {
  /** Name to ask for. */
  name: string;
  /** Query type: A AAAA CNAME NS PTR MX TXT SOA SRV ANY (default A). */
  type?: string;
  /** Expected rcode (default NOERROR). */
  expectRcode?: DnsRcodeName;
  /** An answer record that must be present, in presentation form ("192.0.2.1", "mail.example.com"). */
  expectAnswer?: string;
  /** Transport (default udp). tcp frames the message with its 2-byte length (RFC 1035 4.2.2, RFC 7766). */
  protocol?: 'udp' | 'tcp';
  /** udp: ask again over TCP when the answer comes back truncated (TC), as a resolver would (default true). */
  tcpOnTruncation?: boolean;
}

export interface AgentCheckOptions {
  /** The agent's port. With `type: agent` it defaults to connectPort or the real server's port; beside another check it is required. */
  port?: number;
  /** A line sent to the agent once connected (haproxy agent-send); default: nothing, the agent speaks first. */
  send?: string;
}

export interface SmtpCheckOptions {
  /** The name said in HELO (keepalived helo_name); default: this host's name. */
  helo?: string;
}

/** keepalived FILE_CHECK over a track_file: the file's integer sets up/down or the weight (checkers/file-value.ts). */
export interface FileCheckOptions {
  /** Absolute path of the file. */
  path: string;
  /** Multiplier of the value, added to the weight; 0 = down while the value is non-zero (default 1). */
  weight?: number;
  /** Negates the multiplier; with weight 0, down while the value is 0. */
  reverse?: boolean;
}

export interface ExecCheckOptions {
  /** Shell command (run with /bin/sh -c), keepalived MISC_CHECK misc_path. */
  command: string;
  /** keepalived misc_dynamic: exit 0 = up, 1 = down, 2..255 = up with weight exit-2. */
  dynamicWeight?: boolean;
}

export interface CheckOptions extends RiseFallOptions {
  type: CheckType;
  /** Hard limit of one try; always enforced by the monitor. */
  timeoutMs: number;
  /** Connect to this address instead of the real server's (keepalived connect_ip). */
  connectIp?: string;
  /** Connect to this port instead of the real server's (keepalived connect_port). */
  connectPort?: number;
  /** Source address of the check (keepalived bindto). */
  bindTo?: string;
  /** Interface for IPv6 link-local targets (keepalived bind_if): becomes the address's %scope. */
  bindInterface?: string;
  /** Source port of the check (keepalived bind_port). */
  bindPort?: number;
  /** Log every failed try while the checker is up (keepalived log_all_failures). */
  logAllFailures?: boolean;
  /** SO_MARK on the check's socket (keepalived checker fwmark): native engine only (Node cannot set it before connect). */
  fwmark?: number;
  http?: HttpCheckOptions;
  udp?: UdpCheckOptions;
  dns?: DnsCheckOptions;
  smtp?: SmtpCheckOptions;
  file?: FileCheckOptions;
  exec?: ExecCheckOptions;
  /** The agent (weight feedback): the check itself with `type: agent`, or beside another check. */
  agent?: AgentCheckOptions;
}

/** keepalived-like defaults for everything but `type`. */
export const CHECK_DEFAULTS: Omit<CheckOptions, 'type'> = Object.freeze({
  intervalMs: 2000,
  timeoutMs: 1000,
  rise: 1,
  fall: 1,
  retry: 0,
  delayBeforeRetryMs: 1000,
  warmupMs: 0,
  alpha: false,
});

/** Where a probe goes, after connectIp/connectPort/bindTo are applied. */
export interface Endpoint {
  host: string;
  port: number;
  family: 4 | 6;
  localAddress?: string;
  localPort?: number;
}

/** A bad option, naming the target and field. */
export class HealthOptionError extends Error {
  constructor(
    readonly target: string,
    readonly field: string,
    /** What is wrong, without the where. */
    readonly problem: string,
    /** Where the check sits in the config: "healthCheck", or "moreChecks[0]" for a further checker. */
    section = 'healthCheck',
  ) {
    super(`${target}: ${section}.${field}: ${problem}`);
    this.name = 'HealthOptionError';
  }
}
