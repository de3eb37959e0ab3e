// The typed AST of a keepalived.conf: the top-level blocks sorted by kind, each with its name or
// address and position, the statements inside kept as Directive trees (their meaning is decided by
// the mapper, which reads them through a BlockReader so none can be skipped unnoticed).
import type { Pos } from './lexer.js';
import type { Directive } from './parser.js';

export interface NamedBlock {
  name: string;
  pos: Pos;
  body: Directive[];
  directive: Directive;
}

export type VirtualServerKey =
  | { kind: 'ip'; address: string; port: number | undefined }
  | { kind: 'fwmark'; mark: number }
  | { kind: 'group'; group: string };

export interface VirtualServerBlock {
  key: VirtualServerKey;
  pos: Pos;
  body: Directive[];
  directive: Directive;
}

export interface KeepalivedAst {
  /** Bodies of every global_defs block, in order (keepalived merges them). */
  globalDefs: Directive[];
  vrrpScripts: NamedBlock[];
  trackFiles: NamedBlock[];
  trackProcesses: NamedBlock[];
  vrrpSyncGroups: NamedBlock[];
  vrrpInstances: NamedBlock[];
  virtualServerGroups: NamedBlock[];
  virtualServers: VirtualServerBlock[];
  /** The SSL blocks (client certificate of SSL_GET), in order: the last one counts. */
  ssl: Directive[];
  /** Top-level directives of other kinds (static_ipaddress, bfd_instance, …) and malformed ones. */
  other: Directive[];
  /** Malformed top-level blocks: [directive, why]. */
  invalid: [Directive, string][];
}

const NAMED: Record<string, keyof Pick<KeepalivedAst, 'vrrpScripts' | 'trackFiles' | 'trackProcesses' | 'vrrpSyncGroups' | 'vrrpInstances' | 'virtualServerGroups'>> = {
  vrrp_script: 'vrrpScripts',
  track_file: 'trackFiles',
  vrrp_track_file: 'trackFiles',
  vrrp_track_process: 'trackProcesses',
  vrrp_sync_group: 'vrrpSyncGroups',
  vrrp_instance: 'vrrpInstances',
  virtual_server_group: 'virtualServerGroups',
};

export function toAst(directives: Directive[]): KeepalivedAst {
  const ast: KeepalivedAst = {
    globalDefs: [],
    vrrpScripts: [],
    trackFiles: [],
    trackProcesses: [],
    vrrpSyncGroups: [],
    vrrpInstances: [],
    virtualServerGroups: [],
    virtualServers: [],
    ssl: [],
    other: [],
    invalid: [],
  };
  for (const d of directives) {
    if (d.keyword === 'global_defs' && d.block) {
      ast.globalDefs.push(...d.block);
      continue;
    }
    const kind = NAMED[d.keyword];
    if (kind && d.block) {
      const name = d.args[0];
      if (name === undefined) ast.invalid.push([d, `${d.keyword} needs a name`]);
      else ast[kind].push({ name, pos: d.pos, body: d.block, directive: d });
      continue;
    }
    if (d.keyword === 'SSL' && d.block) {
      ast.ssl.push(d);
      continue;
    }
    if (d.keyword === 'virtual_server' && d.block) {
      const key = virtualServerKey(d.args);
      if (typeof key === 'string') ast.invalid.push([d, key]);
      else ast.virtualServers.push({ key, pos: d.pos, body: d.block, directive: d });
      continue;
    }
    ast.other.push(d);
  }
  return ast;
}

function virtualServerKey(args: string[]): VirtualServerKey | string {
  const [a, b] = args;
  if (a === undefined) return 'virtual_server needs an address and port, fwmark N or group NAME';
  if (a === 'fwmark') {
    const mark = Number(b);
    if (b === undefined || !Number.isInteger(mark) || mark < 1 || mark > 4294967295) return `fwmark ${b ?? ''}: not a mark 1..4294967295`;
    return { kind: 'fwmark', mark };
  }
  if (a === 'group') {
    if (b === undefined) return 'virtual_server group needs a group name';
    return { kind: 'group', group: b };
  }
  if (b === undefined) return { kind: 'ip', address: a, port: undefined };
  const port = Number(b);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return `port ${b}: not a port 0..65535`;
  return { kind: 'ip', address: a, port };
}
