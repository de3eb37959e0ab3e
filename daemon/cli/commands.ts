// The subcommand table. Later issues add theirs here (import-keepalived, reload, user add).
import type { Command } from './command.js';
import { runCommand } from './run.js';
import { checkConfigCommand } from './check-config.js';
import { statusCommand } from './status.js';
import { topCommand } from './top.js';
import { versionCommand } from './version.js';
import { importKeepalivedCliCommand } from '../config/keepalived/command.js';
import { reloadCommand } from './reload.js';
import { userAddCommand } from './user.js';
import { doctorCommand } from './doctor.js';
import { bgpRestoreCommand, bgpWithdrawCommand } from './bgp.js';
import { peerTokenCommand } from './peer-token.js';

export const COMMANDS: Command[] = [runCommand, checkConfigCommand, statusCommand, topCommand, versionCommand, importKeepalivedCliCommand, reloadCommand, userAddCommand, doctorCommand, bgpWithdrawCommand, bgpRestoreCommand, peerTokenCommand];

/** The command for argv: the longest name that matches its leading words ("user add" before "user"). */
export function findCommand(argv: readonly string[], commands: readonly Command[] = COMMANDS): { command: Command; rest: string[] } | undefined {
  const sorted = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  for (const command of sorted) {
    const words = command.name.split(' ');
    if (words.every((w, i) => argv[i] === w)) return { command, rest: argv.slice(words.length) };
  }
  return undefined;
}

export function usage(commands: readonly Command[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: lvsd <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'lvsd <command> --help shows the usage of one command.',
  ].join('\n');
}
