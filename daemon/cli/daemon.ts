// The seam between `lvsd run`'s lifecycle (run.ts: config at start, signals, the service manager) and the
// daemon behind it (director-daemon.ts; the CLI tests plug in a recorder).
import type { LoadedConfig } from '../director/config-file.js';
import type { Logger } from '../log.js';
import type { ServiceNotifier } from '../systemd/notifier.js';
import type { Capabilities, DataplanePlan } from './capabilities.js';

/** What a daemon implementation is given once, at construction. */
export interface RunContext {
  log: Logger;
  configPath: string;
  /** --state, else the config's stateFile. */
  stateFile: string;
  /** --state-from-empty: a corrupt or wrong-shaped state file is moved aside instead of stopping the start. */
  stateFromEmpty: boolean;
  capabilities: Capabilities;
  /** The dataplane `dataplane:` asks for on this machine (auto resolved). */
  dataplane: DataplanePlan;
  /** The service manager: every reload (SIGHUP, `lvsd reload`, the panel) is framed RELOADING … READY. */
  notifier?: ServiceNotifier | null;
}

/**
 * - start: bring up what the config describes (given with the text it was read from); resolves when running.
 *   It should not throw for a missing capability (log it and run the rest); a throw is fatal (exit 1).
 * - reload: SIGHUP — re-read the config file once and apply the difference. The daemon validates, logs and
 *   records the outcome itself (an invalid file or a failed part changes nothing); it throws only when it
 *   could not try.
 * - stop: graceful shutdown (VRRP priority-0 advert, VIPs released, IPVS entries left in place).
 */
export interface Daemon {
  start(loaded: LoadedConfig): Promise<void>;
  reload(): Promise<void>;
  stop(): Promise<void>;
  /** One line on how things are, for systemd's STATUS=. */
  status?(): string;
  /** For the watchdog: null while every part answers within `timeoutMs`, else what does not. */
  liveness?(timeoutMs: number): Promise<string | null>;
  /** Extra time stop() may take beyond the usual deadline (a shutdown script's timeout). */
  stopGraceMs?(): Promise<number>;
}

export type DaemonFactory = (ctx: RunContext) => Daemon;
