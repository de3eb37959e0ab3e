// Rate-limited logging of what a peer can repeat at will (bad adverts, send errors): one line per
// (instance, reason, peer) per window; the rest is counted and reported with the next line.
import { formatIP } from '../net/addr.js';
import type { LogLevel } from './protocol.js';

const LOG_WINDOW_MS = 10_000;

export type LimitedLog = (level: LogLevel, instance: string, msg: string, reason: string, peer: Uint8Array) => void;

/** `log` gets the instance's line with the peer, the reason and how many were held back since the last. */
export function logGate(log: (level: LogLevel, instance: string, msg: string, fields: Record<string, unknown>) => void, clock: () => number = Date.now): LimitedLog {
  const gate = new Map<string, { at: number; suppressed: number }>();
  return (level, instance, msg, reason, peer) => {
    const peerText = formatIP(peer);
    const key = `${instance}|${reason}|${peerText}`;
    const t = clock();
    const g = gate.get(key);
    if (g !== undefined && t - g.at < LOG_WINDOW_MS) {
      g.suppressed++;
      return;
    }
    gate.set(key, { at: t, suppressed: 0 });
    log(level, instance, msg, { peer: peerText, reason, ...(g !== undefined && g.suppressed > 0 ? { suppressedSinceLast: g.suppressed } : {}) });
  };
}
