// Writes docs/config.md, the config reference, from daemon/config/schema.ts (the descriptions,
// types, ranges and enums there are the single source), and the health check table of docs/health.md
// (health-docs.ts). test/unit/config-docs.test.ts fails when either committed file is stale. Run: npx tsc -p tsconfig.json && node dist/scripts/gen-config-docs.js
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigFile } from '../daemon/config/schema.js';
import { cell, isObj, typeText, type S } from './schema-text.js';
import { HEALTH_DOCS_PATH, writeHealthSection } from './health-docs.js';

export const DOCS_PATH = fileURLToPath(new URL('../../docs/config.md', import.meta.url));
const EXAMPLE_PATH = fileURLToPath(new URL('../../config/lvsd.yaml', import.meta.url));

/** The object schema a property leads to (itself, its list items, a union's object branch, a map's values). */
function objectOf(s: S): { schema: S; suffix: string } | undefined {
  if (s.type === 'object' && isObj(s.properties)) return { schema: s, suffix: '' };
  if (s.type === 'array' && isObj(s.items)) {
    const inner = objectOf(s.items);
    return inner ? { schema: inner.schema, suffix: `[]${inner.suffix}` } : undefined;
  }
  if (s.type === 'object' && isObj(s.patternProperties)) {
    const value = Object.values(s.patternProperties)[0];
    const inner = isObj(value) ? objectOf(value) : undefined;
    return inner ? { schema: inner.schema, suffix: `.<name>${inner.suffix}` } : undefined;
  }
  if (Array.isArray(s.anyOf)) {
    for (const b of s.anyOf) {
      const inner = isObj(b) ? objectOf(b) : undefined;
      if (inner) return inner;
    }
  }
  return undefined;
}

function anchor(path: string): string {
  return path.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export function renderDocs(): string {
  const out: string[] = [];
  // Keyed by content: TypeBox's Optional() copies a schema, so identity does not dedupe.
  const seen = new Map<string, string>();
  const queue: { path: string; schema: S }[] = [{ path: '', schema: ConfigFile as unknown as S }];
  const sections: string[][] = [];

  // Depth-first, so each section is followed by the sections of its own sub-maps.
  while (queue.length) {
    const next = queue.pop();
    if (!next) break;
    const { path, schema } = next;
    const lines: string[] = [];
    const title = path === '' ? 'Top level' : `\`${path}\``;
    lines.push(`## ${title}`, '');
    if (typeof schema.description === 'string') lines.push(schema.description, '');
    lines.push('| key | type | required | description |', '| --- | --- | --- | --- |');
    const children: { path: string; schema: S }[] = [];
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    for (const [key, prop] of Object.entries(schema.properties as S)) {
      if (!isObj(prop)) continue;
      const childPath = path ? `${path}.${key}` : key;
      const obj = objectOf(prop);
      let type = typeText(prop);
      if (obj) {
        const target = `${childPath}${obj.suffix}`;
        const key_ = JSON.stringify(obj.schema);
        const existing = seen.get(key_);
        if (existing === undefined) {
          seen.set(key_, target);
          children.push({ path: target, schema: obj.schema });
          type += ` ([below](#${anchor(target)}))`;
        } else {
          type += ` (as [${existing}](#${anchor(existing)}))`;
        }
      }
      lines.push(`| \`${key}\` | ${cell(type)} | ${required.has(key) ? 'yes' : ''} | ${cell(typeof prop.description === 'string' ? prop.description : '')} |`);
    }
    lines.push('');
    sections.push(lines);
    queue.push(...children.reverse());
  }

  out.push(
    '# lvsd configuration reference',
    '',
    '<!-- Generated from daemon/config/schema.ts by scripts/gen-config-docs.ts: do not edit by hand. -->',
    '',
    'lvsd reads one YAML file (default `/etc/lvsd/lvsd.yaml`). Keys are camelCase; the concepts and most names are',
    "keepalived's (`vrrp_instance` → `vrrp.instances`, `virtual_server` → `virtualServers`, `real_server` →",
    '`realServers`). The same schema is exported as JSON Schema in `config/lvsd.schema.json`: add',
    '`# yaml-language-server: $schema=/path/to/lvsd.schema.json` at the top of the file for completion in editors.',
    '',
    '- **durations**: `"250ms"`, `"1s"`, `"1.5s"`, `"2m"`, `"1h"`, or a bare number of seconds (as keepalived).',
    '- **addresses**: IPv4 or IPv6 strings; VIPs in CIDR form (`192.0.2.10/24`; a bare address gets /32 or /128).',
    '- **unknown keys are errors**, with a suggestion for likely typos.',
    '',
    '`lvsd check-config FILE` exits 0 when the file is valid, else 1 with every problem at once, one per line:',
    '',
    '```text',
    'lvsd.yaml:7:17: vrrp.instances[0].priority: 300 is out of range 1..255',
    'lvsd.yaml:14:7: vrrp.instances[1].preemt: unknown key "preemt" (did you mean "preempt"?)',
    'lvsd.yaml:22:20: virtualServers[0].realServers[1].address: real server 10.0.1.11:80 is listed twice (also realServers[0])',
    '```',
    '',
    'Besides the shape below, these rules are checked: a VRID is unique per interface and address family; all VIPs',
    'of one instance share a family; VRRPv2 is IPv4-only with whole-second intervals and may use `authentication`;',
    'VRRPv3 has no authentication and intervals of 10ms..40.95s in steps of 10ms; `trackScripts` name scripts in',
    '`vrrp.scripts`; a sync group names existing instances and an instance is in one group at most; virtual servers',
    'have `address` + `port` or `fwmark` and are unique (`tcp:192.0.2.10:80`, `fwmark:4:7`); a real server is',
    'listed once per virtual server; `dr` and `tun` cannot map ports; scheduler flags belong to their scheduler',
    '(`sh-*` to `sh`, `mh-*` to `mh`); `onePacket` is for UDP; checker settings match the checker type.',
    '',
    'On `SIGHUP` lvsd re-reads the file, and applies only the difference when it is valid; when it is not, it logs',
    'every error and keeps running the old configuration.',
    '',
    '## Example',
    '',
    'The example shipped as `config/lvsd.yaml` (more in `config/examples/`):',
    '',
    '```yaml',
    readFileSync(EXAMPLE_PATH, 'utf8').trimEnd(),
    '```',
    '',
  );
  for (const s of sections) out.push(...s);
  return out.join('\n').trimEnd() + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(DOCS_PATH, renderDocs());
  console.log(`wrote ${DOCS_PATH}`);
  writeHealthSection();
  console.log(`wrote the generated section of ${HEALTH_DOCS_PATH}`);
}
