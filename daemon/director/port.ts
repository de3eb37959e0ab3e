// What the API needs from the director — and nothing more. The Director implements this port; the tests
// and the panel's e2e run against test/support/fake-director.ts. Methods that change things validate
// first and either apply completely or throw DirectorRejection (→ 4xx) with nothing changed.
import type { BgpForceHow, DirectorEvent, DirectorSnapshot, FailoverHow, Override, OverrideTarget } from './snapshot.js';

export interface ConfigProblem {
  /** "FILE:LINE:COL: path: message", as `lvsd check-config` prints it. */
  message: string;
  line?: number;
  column?: number;
  path?: string;
}

export interface ConfigCheck {
  ok: boolean;
  errors: ConfigProblem[];
}

export interface ConfigChange {
  kind: 'node' | 'instance' | 'syncGroup' | 'service' | 'realServer' | 'setting';
  change: 'added' | 'removed' | 'changed';
  /** Instance name, service id, `${serviceId}/${realServerId}`, or a setting path. */
  name: string;
  /** What changed, for people: "priority 150 → 100". */
  detail?: string;
  /** A setting no reload part applies: it takes effect at the next restart. */
  restart?: boolean;
}

export interface ConfigDiff extends ConfigCheck {
  changes: ConfigChange[];
  /** Changed settings that would take effect at the next restart only. */
  restartNeeded?: string[];
}

/** A valid config whose reload failed in one part and was rolled back. */
export interface ReloadFailure {
  /** The part that failed: "health", "vrrp" or "dataplane". */
  part: string;
  error: string;
  /** Parts put back on the running config. */
  rolledBack: string[];
  /** "part: why" for parts whose rollback failed too (empty when the old state is fully back). */
  rollbackFailures: string[];
}

export interface ApplyResult {
  ok: boolean;
  errors: ConfigProblem[];
  /** Hash of the config running after the call (unchanged when not ok). */
  hash: string;
  /** What changed, or (with `failure`) what the reload tried to change. */
  changes: ConfigChange[];
  /** Changed settings that take effect at the next restart (the rest of the change runs now). */
  restartNeeded: string[];
  failure?: ReloadFailure;
}

export interface ApplyOptions {
  /** Refuse (409) unless the running config still has this hash when the apply's turn comes. */
  expectedHash?: string;
  /** Apply a config with no VRRP instance and no virtual server over one that has some (refused otherwise). */
  allowEmpty?: boolean;
}

export interface RunningConfig {
  path: string;
  hash: string;
  text: string;
  /** Whether a previous good config exists to roll back to. */
  canRollback: boolean;
}

/** A refusal the operator can fix (unknown target, not allowed in this state): the API answers 4xx. */
export class DirectorRejection extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = 'DirectorRejection';
  }
}

export interface DirectorPort {
  snapshot(): DirectorSnapshot;
  /** Returns the unsubscribe function. */
  subscribe(fn: (e: DirectorEvent) => void): () => void;
  /** Applies an override now (the API has already persisted nothing; it persists after this resolves). */
  setOverride(target: OverrideTarget, override: Override, by: string): Promise<void>;
  clearOverride(target: OverrideTarget, by: string): Promise<void>;
  forceFailover(instance: string, how: FailoverHow, by: string): Promise<void>;
  /** Withdraws one bgp.announce prefix from this director, or restores it (404 unknown prefix, 409 no bgp section). */
  forceBgp(prefix: string, how: BgpForceHow, by: string): Promise<void>;
  validateConfig(text: string): Promise<ConfigCheck>;
  diffConfig(text: string): Promise<ConfigDiff>;
  /**
   * Validates, writes the config file, reloads; on any error nothing changes (ok: false): an invalid
   * config never reaches the parts, a part that fails is rolled back with `failure` saying which and why.
   * A config that would empty the director (config/empty-reload.ts) is refused unless `allowEmpty`.
   */
  applyConfig(text: string, by: string, opts?: ApplyOptions): Promise<ApplyResult>;
  /** Re-reads the config file and applies it, as SIGHUP does (`lvsd reload`). */
  reloadFile(by: string, opts?: Pick<ApplyOptions, 'allowEmpty'>): Promise<ApplyResult>;
  /** Back to the last config that applied cleanly before the running one. */
  rollbackConfig(by: string): Promise<ApplyResult>;
  runningConfig(): Promise<RunningConfig>;
}
