// How the docs generators say a JSON Schema node in words ("integer 1..255", "duration", "`a` | `b`").
// Shared by gen-config-docs.ts (docs/config.md) and health-docs.ts (docs/health.md's table).
export type S = Record<string, unknown>;
export const isObj = (v: unknown): v is S => v !== null && typeof v === 'object' && !Array.isArray(v);

const FORMAT_WORDS: Record<string, string> = { ip: 'IP address', ipv4: 'IPv4 address', cidr: 'address/prefix', 'host-port': 'host:port' };

export function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function typeText(s: S): string {
  if (s['x-lvsd-type'] === 'duration') return 'duration';
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${String(v)}\``).join(' | ');
  if ('const' in s) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.anyOf)) return s.anyOf.filter(isObj).map(typeText).join(' or ');
  switch (s.type) {
    case 'string':
      if (typeof s.format === 'string') return FORMAT_WORDS[s.format] ?? s.format;
      if (s.pattern === '^[A-Za-z0-9_.:@-]+$') return 'name';
      return 'string';
    case 'integer':
      return typeof s.minimum === 'number' && typeof s.maximum === 'number' ? `integer ${s.minimum}..${s.maximum}` : 'integer';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return isObj(s.items) ? `list of ${typeText(s.items)}` : 'list';
    case 'object':
      if (isObj(s.patternProperties)) {
        const v = Object.values(s.patternProperties)[0];
        return `map of name → ${isObj(v) ? typeText(v) : 'value'}`;
      }
      return 'map';
    default:
      return 'value';
  }
}

