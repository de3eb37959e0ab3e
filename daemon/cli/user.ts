// `lvsd user add NAME [--role R]`: creates a panel/API user. The password comes from stdin (one line),
// never from the command line, where `ps` and shell history would show it. While lvsd runs, the user is
// added through the admin socket (the daemon owns the state file); otherwise straight into the file.
import { addUserLocally } from '../api/user-cli.js';
import type { Role } from '../state/store.js';
import { MAX_PASSWORD } from '../state/password.js';
import { EXIT, UsageError, parse, type Command } from './command.js';
import { findLocalDaemon } from './local.js';
import { typedLine } from './typed-line.js';

const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

/** The first line of stdin. On a terminal the prompt goes to stderr and echo is turned off while typing. */
async function readPassword(): Promise<string> {
  const tty = process.stdin.isTTY;
  if (tty) {
    process.stderr.write('password (input is not shown): ');
    process.stdin.setRawMode(true);
  }
  let text = '';
  try {
    for await (const chunk of process.stdin) {
      const s = typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
      text += s;
      if (tty) {
        // raw mode: the keys as pressed (Backspace is a byte here, Ctrl-C no signal)
        const typed = typedLine(text);
        if (typed.state === 'cancelled') throw new UsageError('cancelled; no user added');
        if (typed.state === 'done') return typed.line;
        continue;
      }
      const end = text.search(/[\r\n]/);
      if (end >= 0) return text.slice(0, end);
      // stdin from /dev/zero or a file with no line end was read until the heap ran out
      if (text.length > MAX_PASSWORD) throw new UsageError(`no end of line in the first ${MAX_PASSWORD} characters on stdin: a password is at most ${MAX_PASSWORD}; no user added`);
    }
  } finally {
    if (tty) {
      process.stdin.setRawMode(false);
      process.stderr.write('\n');
    }
    process.stdin.pause();
  }
  if (text === '') throw new UsageError('no password on stdin');
  return text;
}

export const userAddCommand: Command = {
  name: 'user add',
  summary: 'add a panel/API user (the password is read from stdin)',
  usage: 'user add NAME [--role viewer|operator|admin] [--config FILE | --socket PATH --state FILE]',
  async run(argv, io) {
    const { values, positionals } = parse(
      argv,
      { role: { type: 'string', short: 'r' }, config: { type: 'string', short: 'c' }, socket: { type: 'string' }, state: { type: 'string' } },
      true,
    );
    const [name, extra] = positionals;
    if (name === undefined || extra !== undefined) throw new UsageError('user add takes exactly one NAME');
    const role = (values.role ?? 'viewer') as Role;
    if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    const where = await findLocalDaemon({ config: values.config, socket: values.socket, state: values.state }, io);
    const password = await readPassword();
    const r = await addUserLocally({ socket: where.socket, stateFile: where.stateFile, name, password, role });
    io.out(`user ${r.name} (${r.role}) added ${r.via === 'socket' ? 'through the running lvsd' : `to ${where.stateFile}`}`);
    return EXIT.ok;
  },
};
