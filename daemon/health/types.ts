// Shared vocabulary of the health checkers: what a check reports and why a server changed state.
// Durations are milliseconds here; the config loader turns "1.5s" strings into numbers before they
// reach this module.

export type HealthState = 'up' | 'down';

/** Why a check failed. Kept short and stable: the panel, metrics labels and logs all use these words. */
export type FailReason =
  | 'timeout' // no answer within the check's timeout
  | 'refused' // TCP RST / ICMP port unreachable
  | 'unreachable' // no route, host unreachable, network down
  | 'reset' // connection reset or closed before a full answer
  | 'status' // HTTP status outside the accepted ranges, an SMTP reply code other than 220 / 250
  | 'regex-mismatch' // HTTP/UDP body does not match the regex
  | 'digest-mismatch' // HTTP body md5 differs
  | 'tls' // handshake failed or certificate rejected
  | 'protocol' // the peer answered with something unparseable
  | 'rcode' // DNS rcode other than expected
  | 'answer-mismatch' // DNS answer / UDP reply other than expected
  | 'exit-code' // exec check exited non-zero (or was killed)
  | 'file' // the tracked file's value says down (FILE_CHECK)
  | 'agent' // the agent said down, stopped, fail or maint
  | 'error'; // anything else (EADDRNOTAVAIL for a bad bindTo, spawn failure…)

/** Reasons that are not a check result: lifecycle of the target itself. */
export type LifecycleReason = 'initial' | 'removed' | 'shutdown';

export type Reason = 'ok' | FailReason | LifecycleReason;

/** What a checker says about one attempt. */
export interface CheckVerdict {
  ok: boolean;
  reason: 'ok' | FailReason;
  /** Human detail: "status 503", "ECONNREFUSED", "DEPTH_ZERO_SELF_SIGNED_CERT", "exit 1". */
  detail: string;
  /** Dynamic weight reported by the check (exec dynamic form), if any. */
  weight?: number;
  /** Percentage of the configured weight reported by an agent (0 = drain), if any. */
  weightPercent?: number;
  /** Added to the weight (a FILE_CHECK's value × its weight), if any. */
  weightOffset?: number;
}

/** A verdict with the time it took. */
export interface CheckResult extends CheckVerdict {
  latencyMs: number;
}

export const OK_VERDICT: CheckVerdict = Object.freeze({ ok: true, reason: 'ok', detail: 'ok' });

export function fail(reason: FailReason, detail: string): CheckVerdict {
  return { ok: false, reason, detail };
}
