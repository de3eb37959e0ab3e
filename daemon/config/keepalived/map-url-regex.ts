// A url block's regex and its options (keepalived check_http.c url_check: regex_options, regex_no_match,
// regex_min_offset, regex_max_offset, regex_stack) → bodyRegex and its bodyRegex* settings. The PCRE2
// pattern is rewritten to a JavaScript one that passes the same bodies (pcre.ts).
import type { Directive } from './parser.js';
import type { UrlOut } from './lvsd-shape.js';
import { PCRE2_OPTIONS, pcreToJs } from './pcre.js';
import type { BlockReader, Context } from './reader.js';
import { resolveEscapes } from './lexer.js';

/** keepalived reads an offset with strtoul and takes a bad one as 0; lvsd reports it instead. */
function offset(ctx: Context, d: Directive | undefined): number | undefined {
  if (!d) return undefined;
  const raw = d.args[0];
  if (d.args.length !== 1 || raw === undefined || !/^\d+$/.test(raw) || Number(raw) > 1048576) {
    ctx.reportDirective(d, `${raw ?? '(missing)'} is not a byte offset in 0..1048576; not carried over`);
    return undefined;
  }
  return Number(raw);
}

export function mapUrlRegex(ctx: Context, u: BlockReader, out: UrlOut): void {
  const regexD = u.last('regex');
  const optionDs = u.all('regex_options');
  const noMatchD = u.last('regex_no_match');
  const minD = u.last('regex_min_offset');
  const maxD = u.last('regex_max_offset');
  const stackD = u.last('regex_stack');
  // keepalived reads regex with alloc_strvec_quoted_escaped: \-escapes are resolved outside quotes too
  // (`regex a\.b` is "a.b"), where the lexer resolves them only inside.
  const word = u.str(regexD);
  const regex = word !== undefined && regexD?.argQuoted?.[0] === false ? resolveEscapes(word) : word;
  if (regexD === undefined || regex === undefined) {
    // keepalived: "regex parameters specified without regex", and it drops them.
    for (const d of [...optionDs, noMatchD, minD, maxD, stackD]) if (d) ctx.reportDirective(d, 'no regex in this url: keepalived ignores it too');
    return;
  }
  // keepalived ORs the names of every regex_options line; an unknown name sets nothing.
  const options: string[] = [];
  for (const d of optionDs)
    for (const name of d.args) {
      if ((PCRE2_OPTIONS as readonly string[]).includes(name)) options.push(name);
      else ctx.warnDirective(d, `${name} is not a PCRE2 option keepalived knows; it ignores it, and so does lvsd`);
    }
  let min = offset(ctx, minD);
  let max = offset(ctx, maxD);
  if (min !== undefined && max !== undefined && min > max) {
    // keepalived: "regex min offset … > regex_max_offset … - ignoring" — both are dropped.
    ctx.reportDirective(minD ?? regexD, `regex_min_offset ${min} is past regex_max_offset ${max}: keepalived ignores both, and so does lvsd`);
    min = undefined;
    max = undefined;
  }
  const js = pcreToJs(regex, options, min ?? 0);
  if (js.source === undefined) {
    ctx.reportDirective(regexD, `PCRE2 pattern ${JSON.stringify(regex)} not carried over: ${js.problems.join('; ')}`);
    return;
  }
  for (const p of js.problems) ctx.reportDirective(optionDs[0] ?? regexD, p);
  out.bodyRegex = js.source;
  ctx.source.at(out, 'bodyRegex', regexD.pos);
  if (js.source !== regex) ctx.note(out, `regex ${JSON.stringify(regex)}${options.length > 0 ? ` (${options.join(' ')})` : ''}: PCRE2, rewritten for JavaScript so the same bodies match`);
  if (js.flags !== '') {
    out.bodyRegexFlags = js.flags;
    ctx.source.at(out, 'bodyRegexFlags', (optionDs[0] ?? regexD).pos);
  }
  if (js.noEffect.length > 0) ctx.note(out, `regex_options ${js.noEffect.join(' ')}: no effect on whether, or where, the body matches`);
  if (noMatchD) {
    out.bodyRegexNoMatch = true;
    ctx.source.at(out, 'bodyRegexNoMatch', noMatchD.pos);
  }
  if (min !== undefined && min > 0 && minD) {
    out.bodyRegexMinOffset = min;
    ctx.source.at(out, 'bodyRegexMinOffset', minD.pos);
  }
  if (max !== undefined && maxD) {
    out.bodyRegexMaxOffset = max;
    ctx.source.at(out, 'bodyRegexMaxOffset', maxD.pos);
  }
  if (stackD) ctx.note(out, `regex_stack at ${ctx.displayPos(stackD.pos)}: sizes PCRE2's JIT stack; JavaScript's regex engine grows its backtracking stack itself, so there is nothing to size`);
}
