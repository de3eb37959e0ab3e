// keepalived's url regex is PCRE2 (8-bit, not UTF, newline LF, with the url's regex_options); lvsd's
// bodyRegex is a JavaScript regex over the body read as latin1. This rewrites the places where the same
// text means something else, so the same bodies pass: `.` and `$` (PCRE2's `.` takes a CR and its `$`
// also matches before a final newline), multiline `^`/`$` (newline is LF only), \A \z \Z \h \v \R \N \C
// \e \a \x{..} \Q…\E, POSIX classes, a leading `]` in a class, (?P<name>, (?#…), and the options that
// change what matches. What JavaScript cannot say is reported, never guessed. Pure.

export interface PcreResult {
  /** The JavaScript source and flags; undefined when the pattern cannot be carried over. */
  source?: string;
  flags: string;
  /** Why not (or what part could not be carried). */
  problems: string[];
  /** Options that change nothing lvsd decides: the match is found or not, starting at the same byte. */
  noEffect: string[];
}

/** PCRE2 option names keepalived 2.2.7 knows (check_http.c regex_options[]). */
export const PCRE2_OPTIONS = [
  'allow_empty_class', 'alt_bsux', 'auto_callout', 'caseless', 'dollar_endonly', 'dotall', 'dupnames', 'extended', 'firstline',
  'match_unset_backref', 'multiline', 'never_ucp', 'never_utf', 'no_auto_capture', 'no_auto_possess', 'no_dotstar_anchor',
  'no_start_optimize', 'ucp', 'ungreedy', 'utf', 'never_backslash_c', 'alt_circumflex', 'alt_verbnames', 'use_offset_limit',
] as const;

// Greediness, capture numbering, optimisations and compile-time restrictions: none moves where a match
// starts or whether there is one (keepalived only asks that). JavaScript's \u/\x are alt_bsux's, and it
// matches an unset backreference as empty, as match_unset_backref asks.
const NO_EFFECT = new Set(['ungreedy', 'no_auto_capture', 'no_auto_possess', 'no_start_optimize', 'no_dotstar_anchor', 'auto_callout', 'never_ucp', 'never_utf', 'never_backslash_c', 'use_offset_limit', 'alt_verbnames', 'dupnames', 'alt_bsux', 'match_unset_backref']);
const NOT_CARRIED: Record<string, string> = {
  utf: 'lvsd matches the body byte by byte (latin1); PCRE2 with utf matched UTF-8 characters and failed on bytes that are not UTF-8',
  ucp: 'lvsd\'s \\d \\w \\s \\b stay ASCII',
  alt_circumflex: 'a multiline ^ after a final newline is not carried over',
};

const POSIX: Record<string, string> = {
  alpha: 'a-zA-Z', digit: '0-9', alnum: 'a-zA-Z0-9', upper: 'A-Z', lower: 'a-z', xdigit: '0-9a-fA-F', space: '\\t\\n\\x0b\\f\\r ',
  blank: ' \\t', cntrl: '\\x00-\\x1f\\x7f', print: '\\x20-\\x7e', graph: '\\x21-\\x7e', punct: '!-\\/:-@\\[-`{-~', word: '\\w',
};

const END = '(?![\\s\\S])';
const HSPACE = '\\t \\xa0';
// PCRE2's \s without ucp: JavaScript's \s also takes the no-break space (0xa0).
const SPACE = '\\t\\n\\x0b\\f\\r ';
const VSPACE = '\\n\\x0b\\f\\r\\x85';

/** Translates one PCRE2 pattern with its options (names as keepalived spells them). */
export function pcreToJs(pattern: string, options: readonly string[], minOffset = 0): PcreResult {
  const opt = new Set(options);
  const problems: string[] = [];
  const noEffect = options.filter((o) => NO_EFFECT.has(o));
  // An option lvsd cannot carry is reported, and the pattern still carried; a pattern problem stops it.
  const optionProblems = options.filter((o) => NOT_CARRIED[o] !== undefined).map((o) => `regex_options ${o}: ${NOT_CARRIED[o] ?? ''}`);
  const out: string[] = [];
  let inClass = false;
  let classStart = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    const next = pattern[i + 1];
    if (c === '\\') {
      const [text, used] = escape(pattern, i, inClass, problems);
      out.push(text);
      i += used - 1;
      classStart = false;
      continue;
    }
    if (inClass) {
      if (classStart && c === '^') {
        out.push('^');
        continue;
      }
      if (classStart && c === ']' && !opt.has('allow_empty_class')) out.push('\\]');
      else if (c === '[' && next === ':') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
        const body = m?.[2] === undefined ? undefined : POSIX[m[2]];
        if (m === null) out.push('\\[');
        else if (body === undefined || m[1] === '^') {
          problems.push(`POSIX class ${m[0]} has no JavaScript form here`);
          i += m[0].length - 1;
        } else {
          out.push(body);
          i += m[0].length - 1;
        }
      } else {
        if (c === ']') inClass = false;
        out.push(bytes(c));
      }
      classStart = false;
      continue;
    }
    if (opt.has('extended') && /[ \t\n\r\f\x0b]/.test(c)) continue;
    if (opt.has('extended') && c === '#') {
      const nl = pattern.indexOf('\n', i);
      i = nl < 0 ? pattern.length : nl;
      continue;
    }
    switch (c) {
      case '[':
        inClass = true;
        classStart = true;
        out.push('[');
        if (next === '^') {
          out.push('^');
          i++;
        }
        continue;
      case '.':
        out.push(opt.has('dotall') ? '[\\s\\S]' : '[^\\n]');
        continue;
      case '^':
        // Multiline: at the start, or after an LF that is not the subject's last character.
        out.push(opt.has('multiline') ? `(?:(?<![\\s\\S])|(?<=\\n)(?=[\\s\\S]))` : '^');
        continue;
      case '$':
        out.push(opt.has('multiline') ? `(?=\\n|${END})` : opt.has('dollar_endonly') ? END : `(?=\\n?${END})`);
        continue;
      case '(':
        i += group(pattern, i, out, problems);
        continue;
      case '*':
      case '+':
      case '?':
      case '}':
        out.push(c);
        if (next === '+') problems.push(`the possessive quantifier ${c}+ has no JavaScript form`);
        continue;
      default:
        out.push(bytes(c));
    }
  }
  if (inClass) problems.push('a character class is not closed');
  let source = out.join('');
  // firstline: the match starts at or before the first LF at or after where matching starts. On an
  // anchored pattern libpcre2-8 10.42 keeps the whole match off that LF, which is not carried over.
  if (opt.has('firstline') && /^(?:\^|\\A)/.test(pattern) && !opt.has('multiline')) problems.push('firstline on an anchored pattern (PCRE2 keeps the whole match inside the first line) has no JavaScript form here');
  if (opt.has('firstline')) source = `(?<!^[\\s\\S]{${minOffset}}[\\s\\S]*\\n[\\s\\S]*)(?:${source})`;
  const flags = opt.has('caseless') ? 'i' : '';
  if (problems.length > 0) return { flags, problems: [...problems, ...optionProblems], noEffect };
  try {
    new RegExp(source, flags);
  } catch (e) {
    return { flags, problems: [`JavaScript cannot compile it: ${(e as Error).message}`, ...optionProblems], noEffect };
  }
  return { source, flags, problems: optionProblems, noEffect };
}

const hex = (b: number): string => `\\x${b.toString(16).padStart(2, '0')}`;

/** A literal character as PCRE2 saw it: a non-ASCII one is the bytes of its UTF-8 (the body is matched byte by byte). */
function bytes(ch: string): string {
  return ch.charCodeAt(0) < 0x80 ? ch : [...Buffer.from(ch, 'utf8')].map(hex).join('');
}

/** One escape at pattern[i] ('\\'): its JavaScript text and how many characters it took. */
function escape(pattern: string, i: number, inClass: boolean, problems: string[]): [string, number] {
  const c = pattern[i + 1];
  if (c === undefined) {
    problems.push('the pattern ends in a lone backslash');
    return ['', 1];
  }
  const set = (inner: string, negated: boolean): string => (inClass ? (negated ? fail(`\\${c} inside a class`) : inner) : `[${negated ? '^' : ''}${inner}]`);
  const fail = (what: string): string => {
    problems.push(`${what} has no JavaScript form`);
    return '';
  };
  switch (c) {
    case 'A':
      return [inClass ? fail('\\A inside a class') : '(?<![\\s\\S])', 2];
    case 'z':
      return [inClass ? fail('\\z inside a class') : END, 2];
    case 'Z':
      return [inClass ? fail('\\Z inside a class') : `(?=\\n?${END})`, 2];
    case 'C':
      return [inClass ? fail('\\C inside a class') : '[\\s\\S]', 2];
    case 's':
      return [set(SPACE, false), 2];
    case 'S':
      // JavaScript's \S leaves out the no-break space (0xa0) that PCRE2's keeps.
      return [inClass ? '\\S\\xa0' : '[\\S\\xa0]', 2];
    case 'h':
    case 'H':
      return [set(HSPACE, c === 'H'), 2];
    case 'v':
    case 'V':
      return [set(VSPACE, c === 'V'), 2];
    case 'R':
      return [inClass ? fail('\\R inside a class') : `(?:\\r\\n|[${VSPACE}])`, 2];
    case 'N':
      return [inClass || pattern[i + 2] === '{' ? fail('\\N{…} or \\N in a class') : '[^\\n]', 2];
    case 'e':
      return ['\\x1b', 2];
    case 'a':
      return ['\\x07', 2];
    case 'E':
      return ['', 2];
    case 'Q': {
      const end = pattern.indexOf('\\E', i + 2);
      const text = pattern.slice(i + 2, end < 0 ? pattern.length : end);
      const quoted = [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9 ]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : hex(b))).join('');
      return [quoted, (end < 0 ? pattern.length : end + 2) - i];
    }
    case 'x': {
      const m = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(i + 2));
      if (m?.[1] === undefined) return ['\\x', 2];
      const v = parseInt(m[1], 16);
      return [v <= 0xff ? `\\x${v.toString(16).padStart(2, '0')}` : fail(`\\x{${m[1]}} (not one byte)`), 2 + m[0].length];
    }
    case 'k':
      return pattern[i + 2] === '<' ? ['\\k', 2] : [fail('\\k{…} / \\k\'…\''), 2];
    default:
      // d D w W b B n r t f 0-9 cX and escaped punctuation mean the same; any other letter is an
      // error in PCRE2 (keepalived drops the regex) or a feature JavaScript lacks (\K \G \X \g \p \o).
      if (/[A-Za-z]/.test(c) && !/[dDwWbBnrtfc]/.test(c)) return [fail(`\\${c}`), 2];
      return [`\\${c}`, 2];
  }
}

/** A group opening at pattern[i]: pushes its JavaScript opening, returns the extra characters it took. */
function group(pattern: string, i: number, out: string[], problems: string[]): number {
  const rest = pattern.slice(i);
  if (rest.startsWith('(*')) {
    problems.push('backtracking verbs (*…) have no JavaScript form');
    out.push('(');
    return 0;
  }
  if (!rest.startsWith('(?')) {
    out.push('(');
    return 0;
  }
  for (const open of ['(?:', '(?=', '(?!', '(?<=', '(?<!']) {
    if (rest.startsWith(open)) {
      out.push(open);
      return open.length - 1;
    }
  }
  const comment = /^\(\?#[^)]*\)/.exec(rest);
  if (comment) return comment[0].length - 1;
  const named = /^\(\?(?:P?<|')([A-Za-z_][A-Za-z0-9_]*)[>']/.exec(rest);
  if (named?.[1] !== undefined) {
    out.push(`(?<${named[1]}>`);
    return named[0].length - 1;
  }
  problems.push(`the group ${rest.slice(0, 4)}… (atomic, inline options, recursion, conditional or a reset) has no JavaScript form`);
  out.push('(');
  return 0;
}
