// `lvsd run --config FILE [--state FILE]`: the foreground daemon lifecycle.
//   start:   load + validate the config (exit 1 with every error if invalid), log what this machine
//            can do (IPVS, nftables, raw sockets, CAP_NET_ADMIN) and keep running what it can;
//   SIGHUP:  reload — the daemon re-reads the file and applies only the difference (an invalid file or a
//            failed part changes nothing); SIGHUPs during a reload coalesce into one more;
//   SIGTERM / SIGINT: graceful stop, exit 0 (a second signal exits at once).
// The daemon plugs in behind the seam in daemon.ts (director-daemon.ts in production).
import { loadConfig } from '../config/load.js';
import { errorCount, formatError, type ConfigError } from '../config/errors.js';
import { createLogger, isLogLevel, type Logger } from '../log.js';
import { describeCapabilities, planDataplane, probeCapabilities, type Capabilities } from './capabilities.js';
import { EXIT, UsageError, parse, type Command } from './command.js';
import type { Daemon, DaemonFactory, RunContext } from './daemon.js';
import { DirectorDaemon } from './director-daemon.js';
import { SystemdNotifier, type ServiceNotifier } from '../systemd/notifier.js';

/** The daemon `lvsd run` starts: the director (tests pass their own factory in RunOptions). */
export const createDaemon: DaemonFactory = (ctx) => new DirectorDaemon(ctx);

function logConfigErrors(log: Logger, errors: readonly ConfigError[], level: 'error' | 'warn'): void {
  for (const e of errors) log[level]({ file: e.file, line: e.line, col: e.col, path: e.path }, formatError(e));
}

export interface RunOptions {
  configPath: string;
  statePath?: string;
  stateFromEmpty?: boolean;
  log: Logger;
  factory?: DaemonFactory;
  probe?: () => Capabilities;
  /** Signals to handle; tests may pass an EventEmitter-like process. */
  signals?: NodeJS.EventEmitter;
  /** How long stop() may take before lvsd exits anyway. */
  stopTimeoutMs?: number;
  /** Readiness/watchdog reports to the service manager; default: systemd's, when $NOTIFY_SOCKET asks. */
  notifier?: ServiceNotifier | null;
}

/** Runs until SIGTERM/SIGINT; resolves with the exit code. */
export async function runDaemon(opts: RunOptions): Promise<number> {
  const { log, configPath } = opts;
  const signals = opts.signals ?? process;
  // Until the daemon runs, signals are only remembered (SIGHUP's default action would kill us).
  const early: { hup: boolean; stop?: 'SIGTERM' | 'SIGINT' } = { hup: false };
  const earlyHup = (): void => {
    early.hup = true;
  };
  const earlyTerm = (): void => {
    early.stop ??= 'SIGTERM';
  };
  const earlyInt = (): void => {
    early.stop ??= 'SIGINT';
  };
  signals.on('SIGHUP', earlyHup);
  signals.on('SIGTERM', earlyTerm);
  signals.on('SIGINT', earlyInt);
  const detachEarly = (): void => {
    signals.off('SIGHUP', earlyHup);
    signals.off('SIGTERM', earlyTerm);
    signals.off('SIGINT', earlyInt);
  };

  const notifier = opts.notifier === undefined ? SystemdNotifier.fromEnv(process.env, log) : opts.notifier;
  const started = { daemon: null as Daemon | null };
  // Pings from the start: the event loop is what they prove alive; the daemon's parts join once started.
  notifier?.startWatchdog((ms) => started.daemon?.liveness?.(ms) ?? Promise.resolve(null), () => started.daemon?.status?.() ?? 'starting');
  const first = await loadConfig(configPath);
  logConfigErrors(log, first.warnings, 'warn');
  if (!first.ok) {
    detachEarly();
    notifier?.close();
    logConfigErrors(log, first.errors, 'error');
    log.fatal({ file: configPath, errors: first.errors.length }, `config is invalid (${errorCount(first.errors)}); not starting`);
    return EXIT.failed;
  }
  const current = first.config;

  const capabilities = (opts.probe ?? probeCapabilities)();
  for (const c of describeCapabilities(capabilities)) log[c.ok ? 'info' : 'warn']({ capability: true }, c.text);
  const dataplane = planDataplane(current.dataplane, capabilities);
  log.info({ dataplane: dataplane.kind }, `dataplane: ${dataplane.kind} (${dataplane.reason})`);

  const ctx: RunContext = { log, configPath, stateFile: opts.statePath ?? current.stateFile, stateFromEmpty: opts.stateFromEmpty === true, capabilities, dataplane, notifier };
  const daemon = (opts.factory ?? createDaemon)(ctx);
  log.info({ file: configPath, node: current.node.name, instances: current.vrrp.instances.length, virtualServers: current.virtualServers.length, stateFile: ctx.stateFile }, 'starting');
  try {
    await daemon.start({ config: current, text: first.text });
  } catch (e) {
    detachEarly();
    notifier?.close();
    log.fatal({ err: e }, 'start failed');
    return EXIT.failed;
  }
  log.info('running');
  started.daemon = daemon;
  const status = (): string => daemon.status?.() ?? 'running';
  notifier?.ready(status());

  // Reloads run one at a time; a SIGHUP during a reload schedules one more afterwards.
  let reloading: Promise<void> | undefined;
  const pending = { again: false };
  const onHup = (): void => {
    pending.again = true;
    if (reloading) return;
    reloading = (async () => {
      while (pending.again) {
        pending.again = false;
        log.info({ file: configPath }, 'SIGHUP: reloading config');
        try {
          await daemon.reload();
        } catch (e) {
          log.error({ err: e, reason: e instanceof Error ? e.message : String(e) }, 'reload failed; keeping the running config');
        }
      }
    })().finally(() => {
      reloading = undefined;
    });
  };

  const keepAlive = setInterval(() => undefined, 1 << 30);
  let detach = (): void => undefined;
  const code = await new Promise<number>((resolve) => {
    const state = { stopping: false };
    const onStop = (signal: string) => (): void => {
      if (state.stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        resolve(EXIT.failed);
        return;
      }
      state.stopping = true;
      log.info({ signal }, `${signal}: shutting down`);
      notifier?.stopping(`${signal}: shutting down`);
      void (async () => {
        await reloading;
        const grace = (await daemon.stopGraceMs?.().catch(() => 0)) ?? 0;
        const timeout = new Promise<'timeout'>((r) => setTimeout(() => { r('timeout'); }, (opts.stopTimeoutMs ?? 10_000) + grace).unref());
        try {
          const how = await Promise.race([daemon.stop().then(() => 'stopped' as const), timeout]);
          if (how === 'timeout') log.warn('stop took too long; exiting anyway');
          else log.info('shut down');
          resolve(EXIT.ok);
        } catch (e) {
          log.error({ err: e }, 'stop failed');
          resolve(EXIT.failed);
        }
      })();
    };
    const term = onStop('SIGTERM');
    const int = onStop('SIGINT');
    signals.on('SIGHUP', onHup);
    signals.on('SIGTERM', term);
    signals.on('SIGINT', int);
    detachEarly();
    if (early.stop) (early.stop === 'SIGTERM' ? term : int)();
    else if (early.hup) onHup();
    detach = () => {
      signals.off('SIGHUP', onHup);
      signals.off('SIGTERM', term);
      signals.off('SIGINT', int);
    };
  });
  detach();
  notifier?.close();
  clearInterval(keepAlive);
  return code;
}

export const runCommand: Command = {
  name: 'run',
  summary: 'run the director in the foreground (SIGHUP reloads, SIGTERM/SIGINT stop)',
  usage: 'run --config FILE [--state FILE] [--state-from-empty] [--log-level LEVEL]',
  async run(argv) {
    const { values, positionals } = parse(argv, {
      config: { type: 'string', short: 'c' },
      state: { type: 'string', short: 's' },
      'state-from-empty': { type: 'boolean' },
      'log-level': { type: 'string' },
    });
    if (positionals.length) throw new UsageError(`unexpected argument ${String(positionals[0])}`);
    if (values.config === undefined) throw new UsageError('run needs --config FILE');
    const level = values['log-level'];
    if (level !== undefined && !isLogLevel(level)) throw new UsageError(`--log-level must be one of fatal, error, warn, info, debug, trace, silent`);
    const log = createLogger(level ? { level } : {});
    const code = await runDaemon({ configPath: values.config, ...(values.state !== undefined ? { statePath: values.state } : {}), stateFromEmpty: values['state-from-empty'] === true, log });
    log.flush();
    // Whatever the daemon left open (sockets, child processes) must not keep a stopped lvsd alive.
    setTimeout(() => process.exit(code), 500).unref();
    return code;
  },
};
