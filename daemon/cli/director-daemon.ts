// The composition root of `lvsd run`: opens the state store, starts the director and the API, and maps the
// CLI's reload/stop lifecycle onto them.
import { dirname } from 'node:path';
import { startApi, type RunningApi } from '../api/listen.js';
import { announceBootstrapToken } from '../api/bootstrap.js';
import type { LoadedConfig } from '../director/config-file.js';
import { Director } from '../director/director.js';
import { openDataplane } from '../director/open-dataplane.js';
import { statusLine } from '../director/status-line.js';
import { openStore } from '../state/store.js';
import type { Daemon, RunContext } from './daemon.js';
import { packageVersion } from './version.js';
import { lifecycleBudgetMs, runLifecycleScript } from './lifecycle-script.js';

export class DirectorDaemon implements Daemon {
  private director: Director | null = null;
  private api: RunningApi | null = null;

  constructor(private readonly ctx: RunContext) {}

  async start(loaded: LoadedConfig): Promise<void> {
    const { log } = this.ctx;
    const { config } = loaded;
    // keepalived's startup_script: before anything starts, waited for; its failure is only logged.
    if (config.node.startupScript !== undefined) await runLifecycleScript('startup', config.node.startupScript, { scriptUser: config.vrrp.scriptUser, scriptSecurity: config.vrrp.scriptSecurity, log });
    // A corrupt state file stops the start here, with the file named (the store never replaces it silently).
    const { store, created, movedAside } = await openStore(this.ctx.stateFile, { startEmpty: this.ctx.stateFromEmpty });
    if (movedAside !== null) log.warn({ stateFile: this.ctx.stateFile, movedAside }, `the state file was unreadable: moved aside to ${movedAside}; starting from an empty state`);
    else if (created) log.info({ stateFile: this.ctx.stateFile }, 'created an empty state file');
    this.director = await Director.start({
      loaded,
      logger: log,
      store,
      version: packageVersion(),
      openDataplane: (c) => openDataplane(this.ctx.dataplane, c, dirname(this.ctx.stateFile), log),
      reloadNotices: {
        begin: (why) => this.ctx.notifier?.reloading(why),
        end: () => this.ctx.notifier?.ready(this.status()),
      },
    });
    try {
      this.api = await startApi(
        { listen: config.api.listen, socket: config.api.socket, tls: config.api.tls ?? null, allowedHosts: config.api.allowedHosts, ...(config.api.prometheus === undefined ? {} : { prometheus: config.api.prometheus }) },
        { director: this.director, store, logger: log.child({ component: 'api' }) },
      );
      log.info({ url: this.api.url, socket: this.api.socket }, `API and panel at ${this.api.url}`);
    } catch (e) {
      log.error({ err: e }, `API not started: ${e instanceof Error ? e.message : String(e)}; lvsd keeps running without it`);
    }
    // With no admin yet, a one-time token for the panel's first-admin form goes to the console only.
    await announceBootstrapToken(store, this.api?.url ?? config.api.listen, (line) => process.stderr.write(`${line}\n`));
  }

  async reload(): Promise<void> {
    // The director reads the file, logs and records the outcome; a refused or rolled-back reload changes nothing.
    await this.director?.reloadFile('SIGHUP');
  }

  status(): string {
    return this.director === null ? 'starting' : statusLine(this.director.snapshot());
  }

  liveness(timeoutMs: number): Promise<string | null> {
    return this.director?.liveness(timeoutMs) ?? Promise.resolve(null);
  }

  async stop(): Promise<void> {
    // The running config names the shutdown script (a reload may have changed it since the start).
    const running = this.director?.config;
    await this.api?.close();
    await this.director?.stop();
    // keepalived's shutdown_script: once everything stopped (VIPs released), waited for before the exit.
    const script = running?.node.shutdownScript;
    if (running !== undefined && script !== undefined) await runLifecycleScript('shutdown', script, { scriptUser: running.vrrp.scriptUser, scriptSecurity: running.vrrp.scriptSecurity, log: this.ctx.log });
  }

  /** How much longer than the usual stop the shutdown script may take (runDaemon's stop deadline). */
  stopGraceMs(): Promise<number> {
    return Promise.resolve(lifecycleBudgetMs(this.director?.config.node.shutdownScript));
  }
}
