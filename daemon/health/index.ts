// The health module's public surface: what the director, the API and the CLI import.
export { HealthMonitor, realClock } from './monitor.js';
export type {
  HealthTarget, HealthService, HealthMonitorOptions, TransitionEvent, WeightEvent, QuorumEvent, RemovedEvent,
  MonitorEvents, MonitorClock, TargetSnapshot, CheckerSnapshot, ServiceSnapshot, MonitorStats, ReconcileResult,
} from './monitor.js';
export { CHECK_DEFAULTS, HealthOptionError } from './options.js';
export { checkLabel } from './all-checks.js';
export type {
  CheckOptions, CheckType, HttpCheckOptions, UdpCheckOptions, DnsCheckOptions, DnsRcodeName, SmtpCheckOptions, ExecCheckOptions, Endpoint,
} from './options.js';
export type { HealthState, Reason, FailReason, LifecycleReason, CheckVerdict, CheckResult } from './types.js';
export { buildProbe, type Probe } from './checkers/index.js';
export { shellNotifier, type Notifier } from './notify.js';
