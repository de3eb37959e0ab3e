// lvsd config object → YAML text with comments pointing back to the keepalived source lines
// ("# from keepalived.conf:12") and notes where a value is a keepalived default written out.
import { Document, isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import type { Diagnostic } from './reader.js';
import type { Context } from './reader.js';

export function emitYaml(config: object, ctx: Context, header: string[], diagnostics: Diagnostic[]): string {
  const doc = new Document(config);
  annotate(doc.contents as Node, config, ctx);
  const lines = [...header];
  if (diagnostics.length === 0) lines.push('Complete: every directive was carried over.');
  else {
    lines.push(`INCOMPLETE: ${diagnostics.length} directive(s) were not carried over:`);
    for (const d of diagnostics) lines.push(`  ${d.file}:${d.line}: ${d.directive}: ${d.why}`);
  }
  doc.commentBefore = lines.map((l) => ` ${l}`).join('\n');
  return doc.toString({ lineWidth: 0 });
}

// Keys in the order an operator reads them (identity first, real servers last), whatever order the
// mapper happened to fill them in.
const KEY_ORDER = [
  'node', 'api', 'stateFile', 'dataplane', 'ipvs', 'vrrp', 'virtualServers',
  'name', 'type', 'command', 'address', 'port', 'fwmark', 'family', 'interface', 'state', 'virtualRouterId', 'priority',
  'version', 'advertInterval', 'preempt', 'preemptDelay', 'accept', 'authentication', 'unicastSrcIp', 'unicastPeers',
  'virtualIpaddresses', 'trackInterfaces', 'trackScripts', 'trackFiles', 'instances',
  'protocol', 'scheduler', 'schedulerFlags', 'method', 'tunnel', 'weight', 'upperThreshold', 'lowerThreshold',
  'persistence', 'onePacket', 'quorum', 'hysteresis', 'inhibitOnFailure', 'alpha', 'omega',
  'interval', 'timeout', 'rise', 'fall', 'retry', 'delayBeforeRetry', 'warmup', 'connectIp', 'connectPort', 'bindTo', 'bindInterface',
  'http', 'udp', 'dns', 'exec', 'notify', 'garp', 'sorryServer', 'healthCheck', 'realServers',
];

function rank(p: Pair<Node, Node>): number {
  const i = isScalar(p.key) ? KEY_ORDER.indexOf(String(p.key.value)) : -1;
  return i < 0 ? KEY_ORDER.length : i;
}

function comment(ctx: Context, obj: object, key: string): string | undefined {
  const pos = ctx.source.get(obj, key);
  return pos ? ` from ${ctx.displayPos(pos)}` : undefined;
}

function addBefore(node: { commentBefore?: string | null }, text: string): void {
  node.commentBefore = node.commentBefore ? `${node.commentBefore}\n${text}` : text;
}

function annotate(node: Node, value: unknown, ctx: Context): void {
  if (typeof value !== 'object' || value === null) return;
  const own = comment(ctx, value, '');
  const notes = ctx.notes.get(value) ?? [];
  if (isMap(node)) {
    (node.items as Pair<Node, Node>[]).sort((a, b) => rank(a) - rank(b));
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
      if (pair.value) annotate(pair.value, child, ctx);
    }
    return;
  }
  if (isSeq(node) && Array.isArray(value)) {
    node.items.forEach((item, i) => {
      const c = comment(ctx, value, String(i));
      if (c !== undefined && isScalar(item)) item.comment = c;
      annotate(item as Node, value[i], ctx);
    });
  }
}
