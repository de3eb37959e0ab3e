// Plugs the Director into `lvsd run`: opens the state store, starts the director and the API, and maps
// the CLI's reload/stop lifecycle onto them.
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ConfigDiff } from '../config/diff.js';
import type { Config } from '../config/types.js';
import type { Daemon, RunContext } from '../cli/run.js';
import { startApi, type RunningApi } from '../api/listen.js';
import { announceBootstrapToken } from '../api/bootstrap.js';
import { openStore } from '../state/store.js';
import { Director } from './director.js';
import { openDataplane } from './open-dataplane.js';
import { statusLine } from './status-line.js';
import { packageVersion } from '../cli/version.js';

export class DirectorDaemon implements Daemon {
  private director: Director | null = null;
  private api: RunningApi | null = null;

  constructor(private readonly ctx: RunContext) {}

  async start(config: Config): Promise<void> {
    const { log } = this.ctx;
    // A corrupt state file stops the start here, with the file named (the store never replaces it silently).
    const { store, created, movedAside } = await openStore(this.ctx.stateFile, { startEmpty: this.ctx.stateFromEmpty });
    if (movedAside !== null) log.warn({ stateFile: this.ctx.stateFile, movedAside }, `the state file was unreadable: moved aside to ${movedAside}; starting from an empty state`);
    else if (created) log.info({ stateFile: this.ctx.stateFile }, 'created an empty state file');
    const text = await readFile(this.ctx.configPath, 'utf8');
    this.director = await Director.start({
      config,
      configText: text,
      logger: log,
      store,
      version: packageVersion(),
      openDataplane: (c) => openDataplane(this.ctx.dataplane, c, dirname(this.ctx.stateFile), log),
      applyNotices: {
        begin: (by) => this.ctx.notifier?.reloading(`applying a config from ${by}`),
        end: () => this.ctx.notifier?.ready(this.status()),
      },
    });
    try {
      this.api = await startApi(
        { listen: config.api.listen, socket: config.api.socket, tls: config.api.tls ?? null },
        { director: this.director, store, logger: log.child({ component: 'api' }) },
      );
      log.info({ url: this.api.url, socket: this.api.socket }, `API and panel at ${this.api.url}`);
    } catch (e) {
      log.error({ err: e }, `API not started: ${e instanceof Error ? e.message : String(e)}; lvsd keeps running without it`);
    }
    // With no admin yet, a one-time token for the panel's first-admin form goes to the console only.
    await announceBootstrapToken(store, this.api?.url ?? config.api.listen, (line) => process.stderr.write(`${line}\n`));
  }

  async reload(next: Config, _diff: ConfigDiff): Promise<void> {
    if (this.director === null) return;
    const text = await readFile(this.ctx.configPath, 'utf8');
    const outcome = await this.director.reload(next, text, 'SIGHUP');
    // The director logged the detail and rolled back; the CLI keeps the running config for the next diff.
    if (!outcome.ok) throw new Error(this.director.snapshot().config.lastReload?.message ?? `reload failed at ${outcome.failed.part}`);
  }

  reloadRefused(message: string): void {
    this.director?.reloadRefused(message, 'SIGHUP');
  }

  status(): string {
    return this.director === null ? 'starting' : statusLine(this.director.snapshot());
  }

  liveness(timeoutMs: number): Promise<string | null> {
    return this.director?.liveness(timeoutMs) ?? Promise.resolve(null);
  }

  async stop(): Promise<void> {
    await this.api?.close();
    await this.director?.stop();
  }
}
