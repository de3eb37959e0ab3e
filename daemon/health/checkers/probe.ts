// The one interface every checker implements: a prepared probe for one target. Options are compiled
// once (regexes, request bytes, query packets) when the target is added, so a check allocates only
// what its socket needs. The signal aborts when the monitor's timeout fires; a probe must then
// release its socket or child process and settle.
import type { CheckVerdict } from '../types.js';

export type Probe = ((signal: AbortSignal) => Promise<CheckVerdict>) & {
  /**
   * A probe whose answer can change between checks and that can tell (a file check: inotify) offers
   * this: `changed` asks the monitor for a check now; the returned function stops watching.
   */
  watch?: (changed: () => void) => () => void;
};

/**
 * Settles a probe exactly once, running its cleanup and detaching from the signal. Checkers build
 * on it so no path (error after abort, data after close…) can resolve twice or leak a listener.
 */
export function settleOnce(
  signal: AbortSignal,
  resolve: (v: CheckVerdict) => void,
  cleanup: () => void,
  onAbort: () => CheckVerdict,
): (v: CheckVerdict) => void {
  let settled = false;
  const abort = (): void => {
    done(onAbort());
  };
  function done(v: CheckVerdict): void {
    if (settled) return;
    settled = true;
    signal.removeEventListener('abort', abort);
    cleanup();
    resolve(v);
  }
  if (signal.aborted) queueMicrotask(abort);
  else signal.addEventListener('abort', abort, { once: true });
  return done;
}
