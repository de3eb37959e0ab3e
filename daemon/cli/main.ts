#!/usr/bin/env node
// The `lvsd` bin: dispatches to the subcommand table (commands.ts).
import { COMMANDS, findCommand, usage } from './commands.js';
import { EXIT, UsageError, processIo, type Io } from './command.js';

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    (first === undefined ? io.err : io.out)(await usage());
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === '--version' || first === '-V') argv = ['version'];
  const found = findCommand(argv, COMMANDS);
  if (!found) {
    io.err(`lvsd: unknown command "${first}"\n\n${await usage()}`);
    return EXIT.usage;
  }
  const { rest } = found;
  const command = await found.command.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`usage: lvsd ${command.usage}\n\n${command.summary}`);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`lvsd ${command.name}: ${e.message}\nusage: lvsd ${command.usage}`);
      return EXIT.usage;
    }
    io.err(`lvsd ${command.name}: ${(e as Error).stack ?? String(e)}`);
    return EXIT.failed;
  }
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
