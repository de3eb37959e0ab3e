// lvsd names are [A-Za-z0-9_.:@-]{1,64}; keepalived accepts almost anything. Names that do not fit are
// rewritten the same way everywhere they are used (instance, sync group, script) and the rewrite is
// noted in a comment — references stay consistent and the behaviour is the same.
import type { Directive } from './parser.js';
import type { Context } from './reader.js';

const VALID = /^[A-Za-z0-9_.:@-]{1,64}$/;

export function toSafeName(name: string): string {
  if (VALID.test(name)) return name;
  const cleaned = name.replace(/[^A-Za-z0-9_.:@-]/g, '_').slice(0, 64);
  return cleaned === '' ? '_' : cleaned;
}

export function safeName(ctx: Context, d: Directive, name: string): string {
  const safe = toSafeName(name);
  if (safe !== name) ctx.report(d.pos, d.keyword, `name "${name}" is not a valid lvsd name; written as "${safe}"`);
  return safe;
}
