// `lvsd reload`: like `systemctl reload lvsd` without systemd. Checks the config file here first (every
// error with its FILE:LINE:COL, nothing sent), then asks the running daemon over the admin socket to re-read
// its file, exactly as SIGHUP does; lvsd applies only the difference and says what changed, which changed
// settings wait for a restart — or, when a part of the reload failed and lvsd rolled it back, which part
// and why (exit 1).
import type { ApplyResult } from '../director/port.js';
import { LocalApiError, localRequest } from '../api/local-client.js';
import { errorCount, formatError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import { EXIT, UsageError, parse, type Command } from './command.js';
import { existsSync } from 'node:fs';
import { DEFAULT_CONFIG } from './local.js';

export const reloadCommand: Command = {
  name: 'reload',
  summary: 'check the config file and make the running lvsd apply it (only the difference changes)',
  usage: 'reload [--config FILE] [--socket PATH] [--allow-empty]',
  async run(argv, io) {
    const { values } = parse(argv, { config: { type: 'string', short: 'c' }, socket: { type: 'string' }, 'allow-empty': { type: 'boolean' } });
    const configPath = values.config ?? (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : undefined);
    if (configPath === undefined) throw new UsageError('reload needs --config FILE (no /etc/lvsd/lvsd.yaml here)');
    const checked = await loadConfig(configPath);
    if (!checked.ok) {
      for (const e of checked.errors) io.err(formatError(e));
      io.err(`${configPath}: not reloaded (${errorCount(checked.errors)}); lvsd keeps running its current config`);
      return EXIT.failed;
    }
    const socket = values.socket ?? checked.config.api.socket;
    try {
      // --allow-empty: a config with no VRRP instance and no virtual server replaces one that has some (else refused).
      const { body } = await localRequest<ApplyResult>(socket, 'POST', '/api/v1/config/reload', values['allow-empty'] === true ? { allowEmpty: true } : {});
      if (body.changes.length === 0) io.out('reloaded: no changes');
      for (const c of body.changes) io.out(`${c.change} ${c.kind} ${c.name}${c.detail === undefined ? '' : `: ${c.detail}`}${c.restart === true ? ' (takes effect at the next restart)' : ''}`);
      if (body.restartNeeded.length > 0) io.err(`restart lvsd for these to take effect: ${body.restartNeeded.join(', ')}`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof LocalApiError && e.status === 0) {
        io.err(e.message);
        return EXIT.notRunning;
      }
      // 422: the running lvsd could not apply it (a part failed and was rolled back): say which and why.
      if (e instanceof LocalApiError && e.status === 422) {
        io.err(`${configPath}: not reloaded: ${e.message.replace(/^.*?: 422 config not (?:applied|reloaded): /, '')}`);
        return EXIT.failed;
      }
      throw e;
    }
  },
};
