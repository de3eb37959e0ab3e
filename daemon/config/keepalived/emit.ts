// lvsd config object → YAML text with comments pointing back to the keepalived source lines
// ("# from keepalived.conf:12") and notes where a value is a keepalived default written out.
import { Document, isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import type { Diagnostic } from './reader.js';
import type { Context } from './reader.js';

export function emitYaml(config: object, ctx: Context, header: string[], diagnostics: Diagnostic[]): string {
  const doc = new Document(config);
  annotate(doc.contents as Node, config, ctx, 'root');
  const lines = [...header];
  const lost = diagnostics.filter((d) => d.warning !== true);
  const warnings = diagnostics.filter((d) => d.warning === true);
  if (lost.length === 0) lines.push('Complete: every directive was carried over.');
  else {
    lines.push(`INCOMPLETE: ${lost.length} directive(s) were not carried over:`);
    for (const d of lost) lines.push(`  ${d.file}:${d.line}: ${d.directive}: ${d.why}`);
  }
  if (warnings.length > 0) {
    lines.push('Warnings (nothing lost):');
    for (const d of warnings) lines.push(`  ${d.file}:${d.line}: ${d.directive}: ${d.why}`);
  }
  doc.commentBefore = lines.map((l) => ` ${l}`).join('\n');
  return doc.toString({ lineWidth: 0 });
}

// Keys in the order an operator reads them (identity first, real servers last), whatever order the
// mapper happened to fill them in. Keyed by what the map is, which the walk knows from its path.
type Kind = 'root' | 'vrrp' | 'instance' | 'script' | 'process' | 'vs' | 'rs' | 'hc' | 'track' | 'other';

const ORDER: Partial<Record<Kind, string[]>> = {
  root: ['node', 'api', 'stateFile', 'dataplane', 'ipvs', 'nftables', 'userspace', 'vrrp', 'alerts', 'virtualServers'],
  vrrp: ['scriptUser', 'scriptSecurity', 'notifyFifo', 'multicastGroup4', 'multicastGroup6', 'startupDelay', 'delayAfterBoot', 'interfaceUpDownDelays', 'staticIpaddresses', 'staticRoutes', 'staticRules', 'disableLocalIgmp', 'nftables', 'garp', 'garpGroups', 'lowerPrioNoAdvert', 'higherPrioSendAdvert', 'scripts', 'processes', 'instances', 'syncGroups'],
  instance: [
    'name', 'interface', 'state', 'virtualRouterId', 'priority', 'version', 'advertInterval', 'preempt', 'preemptDelay', 'accept',
    'authentication', 'unicastSrcIp', 'unicastPeers', 'unicastTtl', 'oldUnicastChecksum', 'downTimerAdverts', 'trackSrcIp', 'dontTrackPrimary', 'promoteSecondaries', 'multicastGroup', 'virtualIpaddresses', 'virtualIpaddressesExcluded', 'trackInterfaces', 'trackScripts', 'trackFiles', 'trackProcesses',
    'notify', 'notifyDeleted', 'garp', 'lowerPrioNoAdvert', 'higherPrioSendAdvert',
  ],
  script: ['command', 'interval', 'timeout', 'rise', 'fall', 'weight', 'user'],
  vs: [
    'name', 'address', 'port', 'fwmark', 'family', 'protocol', 'scheduler', 'schedulerFlags', 'method', 'persistence', 'onePacket',
    'quorum', 'hysteresis', 'inhibitOnFailure', 'alpha', 'haSuspend', 'omega', 'notify', 'sorryServer', 'healthCheck', 'moreChecks', 'realServers',
  ],
  rs: ['address', 'port', 'weight', 'method', 'tunnel', 'upperThreshold', 'lowerThreshold', 'healthCheck', 'moreChecks', 'notify'],
  hc: [
    'type', 'interval', 'timeout', 'rise', 'fall', 'retry', 'delayBeforeRetry', 'warmup', 'connectIp', 'connectPort', 'bindTo', 'bindInterface', 'bindPort', 'fwmark',
    'http', 'udp', 'dns', 'smtp', 'file', 'exec',
  ],
  track: ['name', 'path', 'weight', 'reverse'],
  process: ['process', 'parameters', 'paramMatch', 'fullCommand', 'quorum', 'quorumMax', 'weight', 'reverse', 'forkDelay', 'terminateDelay'],
};

function childKind(parent: Kind, key: string | undefined): Kind {
  if (parent === 'root') return key === 'vrrp' ? 'vrrp' : key === 'virtualServers' ? 'vs' : 'other';
  if (parent === 'vrrp') return key === 'instances' ? 'instance' : key === 'scripts' ? 'script' : key === 'processes' ? 'process' : 'other';
  if (parent === 'instance') return key === 'trackInterfaces' || key === 'trackScripts' || key === 'trackFiles' || key === 'trackProcesses' ? 'track' : 'other';
  if (parent === 'vs') return key === 'realServers' ? 'rs' : key === 'healthCheck' || key === 'moreChecks' ? 'hc' : 'other';
  if (parent === 'rs') return key === 'healthCheck' || key === 'moreChecks' ? 'hc' : 'other';
  return 'other';
}

function sortPairs(items: Pair<Node, Node>[], kind: Kind): void {
  const order = ORDER[kind];
  if (!order) return;
  const rank = (p: Pair<Node, Node>): number => {
    const i = isScalar(p.key) ? order.indexOf(String(p.key.value)) : -1;
    return i < 0 ? order.length : i;
  };
  items.sort((a, b) => rank(a) - rank(b));
}

function comment(ctx: Context, obj: object, key: string): string | undefined {
  const pos = ctx.source.get(obj, key);
  return pos ? ` from ${ctx.displayPos(pos)}` : undefined;
}

function addBefore(node: { commentBefore?: string | null }, text: string): void {
  node.commentBefore = node.commentBefore ? `${node.commentBefore}\n${text}` : text;
}

function annotate(node: Node, value: unknown, ctx: Context, kind: Kind): void {
  if (typeof value !== 'object' || value === null) return;
  const own = comment(ctx, value, '');
  const notes = ctx.notes.get(value) ?? [];
  if (isMap(node)) {
    // Maps inside a record of scripts are scripts; the record itself keeps the file's order.
    if (kind !== 'script' || !node.items.every((p) => isMap((p as Pair<Node, Node>).value))) sortPairs(node.items as Pair<Node, Node>[], kind);
    const head = [own, ...notes.map((n) => ` ${n}`)].filter((s): s is string => s !== undefined);
    // A map's own comment goes before its first key, i.e. right after "- " or "key:".
    if (head.length > 0) addBefore(node, head.join('\n'));
    for (const pair of node.items as Pair<Node, Node>[]) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) continue;
      const child = (value as Record<string, unknown>)[key];
      const c = comment(ctx, value, key);
      if (c !== undefined && pair.value) {
        if (isScalar(pair.value)) pair.value.comment = c;
        else if (isScalar(pair.key)) addBefore(pair.key, c);
      }
      const scriptsRecord = kind === 'script' && isMap(pair.value) && node.items.every((p) => isMap((p as Pair<Node, Node>).value));
      if (pair.value) annotate(pair.value, child, ctx, scriptsRecord ? 'script' : childKind(kind, key));
    }
    return;
  }
  if (isSeq(node) && Array.isArray(value)) {
    node.items.forEach((item, i) => {
      const c = comment(ctx, value, String(i));
      if (c !== undefined && isScalar(item)) item.comment = c;
      annotate(item as Node, value[i], ctx, kind);
    });
  }
}
