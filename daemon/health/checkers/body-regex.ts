// The body regex of an http check, with keepalived's url options: regex_no_match inverts it, and
// regex_min_offset / regex_max_offset bound where the match may start (keepalived check_http.c: PCRE2's
// start offset is the minimum, so a lookbehind still sees the bytes before it; a match found starting
// past the maximum does not count). Pure: options in, a verdict on body bytes out.

export interface BodyRegexPage {
  bodyRegex?: string;
  bodyRegexFlags?: string;
  bodyRegexNoMatch?: boolean;
  bodyRegexMinOffset?: number;
  bodyRegexMaxOffset?: number;
}

export interface BodyRegex {
  /** Compiled with the g flag, so lastIndex sets where the search starts. */
  re: RegExp;
  noMatch: boolean;
  minOffset: number;
  maxOffset: number | undefined;
}

const OPTION_KEYS = ['bodyRegexFlags', 'bodyRegexNoMatch', 'bodyRegexMinOffset', 'bodyRegexMaxOffset'] as const;

/** What is wrong with a page's regex settings, as [key, why] pairs (none: fine). */
export function bodyRegexProblems(p: BodyRegexPage | undefined): [keyof BodyRegexPage, string][] {
  if (p === undefined) return [];
  const out: [keyof BodyRegexPage, string][] = [];
  if (p.bodyRegex === undefined) {
    for (const k of OPTION_KEYS) if (p[k] !== undefined) out.push([k, 'needs bodyRegex']);
    return out;
  }
  const flags = p.bodyRegexFlags ?? '';
  if (!/^[ims]*$/.test(flags) || new Set(flags).size !== flags.length) out.push(['bodyRegexFlags', `${JSON.stringify(flags)}: want each of i, m, s at most once`]);
  else {
    try {
      new RegExp(p.bodyRegex, flags);
    } catch (e) {
      out.push(['bodyRegex', `not a regular expression: ${(e as Error).message}`]);
    }
  }
  if (p.bodyRegexMinOffset !== undefined && p.bodyRegexMaxOffset !== undefined && p.bodyRegexMinOffset > p.bodyRegexMaxOffset) {
    out.push(['bodyRegexMinOffset', `${p.bodyRegexMinOffset} is past bodyRegexMaxOffset ${p.bodyRegexMaxOffset}: no match could ever count`]);
  }
  return out;
}

/** Compiles a page's regex; undefined without one. Throws Error("field: why") on bad options. */
export function compileBodyRegex(p: BodyRegexPage): BodyRegex | undefined {
  const [problem] = bodyRegexProblems(p);
  if (problem !== undefined) throw new Error(`${problem[0]}: ${problem[1]}`);
  if (p.bodyRegex === undefined) return undefined;
  return {
    re: new RegExp(p.bodyRegex, `${p.bodyRegexFlags ?? ''}g`),
    noMatch: p.bodyRegexNoMatch === true,
    minOffset: p.bodyRegexMinOffset ?? 0,
    maxOffset: p.bodyRegexMaxOffset,
  };
}

/** Whether the regex matches the body where it may start. The body is read as latin1: one character per byte. */
export function bodyRegexMatches(r: BodyRegex, body: Buffer): boolean {
  if (r.minOffset > body.length) return false;
  r.re.lastIndex = r.minOffset;
  const m = r.re.exec(body.toString('latin1'));
  return m !== null && (r.maxOffset === undefined || m.index <= r.maxOffset);
}

/** The check's verdict on the body: matched, unless inverted. */
export function bodyRegexPasses(r: BodyRegex, body: Buffer): boolean {
  return bodyRegexMatches(r, body) !== r.noMatch;
}

/** How a failure reads in the check's detail. */
export function bodyRegexFailure(r: BodyRegex): string {
  const where = r.minOffset > 0 || r.maxOffset !== undefined ? ` starting at bytes ${r.minOffset}..${r.maxOffset ?? 'end'}` : '';
  const flags = r.re.flags.replace('g', '');
  return r.noMatch ? `body matches /${r.re.source}/${flags}${where} (bodyRegexNoMatch)` : `body does not match /${r.re.source}/${flags}${where}`;
}
