// `lvsd import-keepalived` as an entry of the CLI's subcommand table (daemon/cli/commands.ts):
// structurally a `Command` ({ name, summary, usage, run(argv, io) }), so registering it is one import
// and one array element there.
import { importKeepalivedCommand } from './index.js';

export const importKeepalivedCliCommand = {
  name: 'import-keepalived',
  summary: 'convert a keepalived.conf to lvsd.yaml on stdout; what cannot be carried over goes to stderr (exit 0 complete, 2 incomplete)',
  usage: 'import-keepalived [--config-id ID] FILE',
  run(argv: string[], io: { out: (text: string) => void; err: (text: string) => void }): Promise<number> {
    return importKeepalivedCommand(argv, { stdout: (t) => { io.out(t); }, stderr: (t) => { io.err(t); } });
  },
};
