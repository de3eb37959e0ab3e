// The subcommand table: each command's module is loaded only when it runs (or for help), so `lvsd
// --version` or `lvsd status` does not load the daemon (the director, netlink, fastify) to print a line.
import type { Command } from './command.js';

/** A command by its name (the dispatch key: it must equal the module's Command.name, cli-main.test.ts). */
export interface CommandEntry {
  name: string;
  load(): Promise<Command>;
}

export const COMMANDS: CommandEntry[] = [
  { name: 'run', load: async () => (await import('./run.js')).runCommand },
  { name: 'check-config', load: async () => (await import('./check-config.js')).checkConfigCommand },
  { name: 'status', load: async () => (await import('./status.js')).statusCommand },
  { name: 'top', load: async () => (await import('./top.js')).topCommand },
  { name: 'version', load: async () => (await import('./version.js')).versionCommand },
  { name: 'import-keepalived', load: async () => (await import('../config/keepalived/command.js')).importKeepalivedCliCommand },
  { name: 'reload', load: async () => (await import('./reload.js')).reloadCommand },
  { name: 'user add', load: async () => (await import('./user.js')).userAddCommand },
  { name: 'doctor', load: async () => (await import('./doctor.js')).doctorCommand },
  { name: 'bgp withdraw', load: async () => (await import('./bgp.js')).bgpWithdrawCommand },
  { name: 'bgp restore', load: async () => (await import('./bgp.js')).bgpRestoreCommand },
  { name: 'peer-token', load: async () => (await import('./peer-token.js')).peerTokenCommand },
];

/** The entry for argv: the longest name that matches its leading words ("user add" before "user"). */
export function findCommand<T extends { name: string }>(argv: readonly string[], commands: readonly T[]): { command: T; rest: string[] } | undefined {
  const sorted = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  for (const command of sorted) {
    const words = command.name.split(' ');
    if (words.every((w, i) => argv[i] === w)) return { command, rest: argv.slice(words.length) };
  }
  return undefined;
}

/** `lvsd help`: every command with its summary (loads them all: help is rare). */
export async function usage(entries: readonly CommandEntry[] = COMMANDS): Promise<string> {
  const commands = await Promise.all(entries.map((e) => e.load()));
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
