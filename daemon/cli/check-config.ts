// `lvsd check-config FILE`: exit 0 when the config is valid, else 1 with one
// `FILE:LINE:COL: path: message` line per problem on stderr (like `keepalived -t` / `nginx -t`).
// Warnings go to stderr too but do not fail the check.
import { loadConfig } from '../config/load.js';
import { errorCount, formatError } from '../config/errors.js';
import { EXIT, UsageError, parse, type Command } from './command.js';

export const checkConfigCommand: Command = {
  name: 'check-config',
  summary: 'validate a config file and print every error as FILE:LINE:COL: path: message',
  usage: 'check-config [--quiet] FILE',
  async run(argv, io) {
    const { values, positionals } = parse(argv, { quiet: { type: 'boolean', short: 'q' } }, true);
    if (positionals.length !== 1 || positionals[0] === undefined) throw new UsageError('check-config takes exactly one FILE');
    const file = positionals[0];
    const r = await loadConfig(file);
    for (const w of r.warnings) io.err(`${formatError(w)} (warning)`);
    if (!r.ok) {
      for (const e of r.errors) io.err(formatError(e));
      io.err(`${file}: ${errorCount(r.errors)}`);
      return EXIT.failed;
    }
    if (values.quiet !== true) {
      const c = r.config;
      const rs = c.virtualServers.reduce((n, v) => n + v.realServers.length, 0);
      io.out(
        `${file}: ok (${c.vrrp.instances.length} VRRP instance${c.vrrp.instances.length === 1 ? '' : 's'}, ` +
          `${c.virtualServers.length} virtual server${c.virtualServers.length === 1 ? '' : 's'}, ${rs} real server${rs === 1 ? '' : 's'})`,
      );
    }
    return EXIT.ok;
  },
};
