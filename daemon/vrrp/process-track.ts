// keepalived's vrrp_track_process, the pure part: which processes a tracker counts (by name or command
// line), and when its quorum is held, with fork_delay / terminate_delay as deadlines (no timers here).
// Measured against keepalived 2.2.7: a matching exec counts at once; an exit counts after terminate_delay;
// the priority change rides on the next advert, a FAULT (weight 0) is at once (docs/vrrp.md).

export interface TrackProcessOptions {
  /**
   * The process: its name (/proc/PID/comm, at most 15 bytes: a longer one is compared by its first 15, as
   * the kernel truncates it) or, with parameters, paramMatch or fullCommand, argv[0] of /proc/PID/cmdline.
   */
  process: string;
  /** Its parameters (argv[1..]); present = the command line is compared. */
  parameters?: string[];
  /**
   * How the parameters compare (keepalived param_match): exact (default) — the same; partial — these first,
   * others may follow; initial — the command line's parameters start with these (the last may be longer).
   */
  paramMatch?: 'exact' | 'partial' | 'initial';
  /** Compare argv[0] of the command line instead of the name, even without parameters (keepalived full_command). */
  fullCommand?: boolean;
  /** Fewest matching processes that are OK. Default 1. */
  quorum?: number;
  /** Most matching processes that are OK (keepalived quorum_max; 0 = OK only while none runs). Default: no limit. */
  quorumMax?: number;
  /** Default weight of the instances tracking it. keepalived's default: 1. */
  weight?: number;
  /** The tracker counts as failing while its quorum is held, and the other way round (keepalived reverse). */
  reverse?: boolean;
  /** Quorum gained by a fork counts only after this long (keepalived fork_delay). Default 0. */
  forkDelayMs?: number;
  /** Quorum lost by an exit counts only after this long (keepalived terminate_delay). Default 0. */
  terminateDelayMs?: number;
}

/** What is known of one process: its name, and its command line when a tracker needs it (null: not read). */
export interface ProcInfo {
  comm: string;
  argv: string[] | null;
}

const TASK_COMM_LEN = 15;

/** Whether any of these trackers compares command lines (then /proc/PID/cmdline is read, else only comm). */
export function needsCmdline(o: TrackProcessOptions): boolean {
  return o.parameters !== undefined || o.paramMatch !== undefined || o.fullCommand === true;
}

export function matches(o: TrackProcessOptions, p: ProcInfo): boolean {
  if (!needsCmdline(o)) return p.comm === o.process.slice(0, TASK_COMM_LEN);
  const argv = p.argv;
  if (argv === null || argv.length === 0 || argv[0] !== o.process) return false;
  if (o.parameters === undefined && o.paramMatch === undefined) return true;
  // Compared as keepalived does: the parameters as one NUL-separated string.
  const want = (o.parameters ?? []).join('\0');
  const have = argv.slice(1).join('\0');
  switch (o.paramMatch ?? 'exact') {
    case 'exact':
      return have === want;
    case 'partial':
      return want === '' || have === want || have.startsWith(`${want}\0`);
    case 'initial':
      return have.startsWith(want);
  }
}

export type Cause = 'fork' | 'exec' | 'exit' | 'scan';

export interface QuorumChange {
  name: string;
  /** Quorum held (before `reverse`, which the instances apply). */
  ok: boolean;
  count: number;
}

interface Tracker {
  o: TrackProcessOptions;
  pids: Set<number>;
  ok: boolean | null;
  pending: { ok: boolean; at: number } | null;
}

/** Every tracker's matching processes and quorum. Feed it what /proc and the connector say; it says what changed. */
export class ProcessTable {
  private readonly trackers = new Map<string, Tracker>();

  constructor(trackers: Record<string, TrackProcessOptions>) {
    for (const [name, o] of Object.entries(trackers)) this.trackers.set(name, { o, pids: new Set(), ok: null, pending: null });
  }

  /** Whether any tracker needs command lines read. */
  get needsCmdline(): boolean {
    return [...this.trackers.values()].some((t) => needsCmdline(t.o));
  }

  /** A process seen (at the start-up scan, exec'd, forked, renamed): joins or leaves each tracker by match. */
  seen(pid: number, p: ProcInfo, cause: Cause, now: number): QuorumChange[] {
    const out: QuorumChange[] = [];
    for (const [name, t] of this.trackers) {
      const before = t.pids.size;
      if (matches(t.o, p)) t.pids.add(pid);
      else t.pids.delete(pid);
      // Until the start-up scan is over (scanned()), only who matches is kept.
      if (t.pids.size !== before && t.ok !== null) this.settle(name, t, cause, now, out);
    }
    return out;
  }

  /** A process exited. */
  gone(pid: number, now: number): QuorumChange[] {
    const out: QuorumChange[] = [];
    for (const [name, t] of this.trackers) if (t.pids.delete(pid) && t.ok !== null) this.settle(name, t, 'exit', now, out);
    return out;
  }

  /** The start-up scan is over: every tracker has a state from now on (none seen = 0 processes). */
  scanned(now: number): QuorumChange[] {
    const out: QuorumChange[] = [];
    for (const [name, t] of this.trackers) if (t.ok === null) this.settle(name, t, 'scan', now, out);
    return out;
  }

  /** Delayed changes whose time has come. */
  due(now: number): QuorumChange[] {
    const out: QuorumChange[] = [];
    for (const [name, t] of this.trackers) {
      if (t.pending === null || t.pending.at > now) continue;
      t.ok = t.pending.ok;
      t.pending = null;
      out.push({ name, ok: t.ok, count: t.pids.size });
    }
    return out;
  }

  /** When due() next has something to do, or null. */
  deadline(): number | null {
    let d: number | null = null;
    for (const t of this.trackers.values()) if (t.pending !== null && (d === null || t.pending.at < d)) d = t.pending.at;
    return d;
  }

  private settle(name: string, t: Tracker, cause: Cause, now: number, out: QuorumChange[]): void {
    const n = t.pids.size;
    const ok = n >= (t.o.quorum ?? 1) && (t.o.quorumMax === undefined || n <= t.o.quorumMax);
    if (t.ok === ok) {
      // Back where it was before a delayed change came due: the bounce the delay is there to hide.
      t.pending = null;
      return;
    }
    const delay = t.ok === null ? 0 : ok && cause === 'fork' ? (t.o.forkDelayMs ?? 0) : !ok && cause === 'exit' ? (t.o.terminateDelayMs ?? 0) : 0;
    if (delay > 0) {
      if (t.pending?.ok !== ok) t.pending = { ok, at: now + delay };
      return;
    }
    t.ok = ok;
    t.pending = null;
    out.push({ name, ok, count: n });
  }
}
