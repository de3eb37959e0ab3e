// Text mutators and the run settings of the fuzz harness (test/fuzz/). Inputs come from fast-check, so
// every run is reproducible from its seed and a failure shrinks to a small case.
//
// LVSD_FUZZ_N       inputs per target (default 25,000: four targets, 100,000 a run in CI; 1,000,000 by hand)
// LVSD_FUZZ_SECONDS stop a target after this long even if N is not reached (default 90): CI stays bounded
// LVSD_FUZZ_SEED    the seed (default: a fixed one, so CI is repeatable; the seed is printed)
import fc from 'fast-check';

export interface FuzzSettings {
  n: number;
  seconds: number;
  seed: number;
}

export function fuzzSettings(env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const num = (name: string, def: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    const v = Number(raw);
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}=${raw}: expected a positive number`);
    return v;
  };
  return { n: Math.floor(num('LVSD_FUZZ_N', 25_000)), seconds: num('LVSD_FUZZ_SECONDS', 90), seed: Math.floor(num('LVSD_FUZZ_SEED', 17_2026)) };
}

/** One edit of a text: what a clumsy hand, a bad copy or a broken disk does to a config file. */
export type Edit =
  | { op: 'truncate'; at: number }
  | { op: 'delete-line'; line: number }
  | { op: 'duplicate-line'; line: number }
  | { op: 'swap-lines'; a: number; b: number }
  | { op: 'indent'; line: number; by: number }
  | { op: 'insert'; at: number; text: string }
  | { op: 'delete'; at: number; len: number }
  | { op: 'replace'; at: number; text: string };

function lineEdit(text: string, line: number, f: (lines: string[], i: number) => void): string {
  const lines = text.split('\n');
  if (lines.length === 0) return text;
  f(lines, line % lines.length);
  return lines.join('\n');
}

export function applyEdit(text: string, e: Edit): string {
  const at = (n: number) => (text.length === 0 ? 0 : n % (text.length + 1));
  switch (e.op) {
    case 'truncate':
      return text.slice(0, at(e.at));
    case 'delete-line':
      return lineEdit(text, e.line, (l, i) => l.splice(i, 1));
    case 'duplicate-line':
      return lineEdit(text, e.line, (l, i) => l.splice(i, 0, l[i] ?? ''));
    case 'swap-lines':
      return lineEdit(text, e.a, (l, i) => {
        const j = e.b % l.length;
        [l[i], l[j]] = [l[j] ?? '', l[i] ?? ''];
      });
    case 'indent':
      return lineEdit(text, e.line, (l, i) => {
        const s = l[i] ?? '';
        l[i] = e.by >= 0 ? ' '.repeat(e.by) + s : s.slice(Math.min(-e.by, s.length - s.trimStart().length));
      });
    case 'insert':
      return text.slice(0, at(e.at)) + e.text + text.slice(at(e.at));
    case 'delete':
      return text.slice(0, at(e.at)) + text.slice(at(e.at) + e.len);
    case 'replace':
      return text.slice(0, at(e.at)) + e.text + text.slice(at(e.at) + e.text.length);
  }
}

/** Edits whose inserted text is drawn from `specials` (the format's own punctuation and words) or anything. */
export function editArb(specials: readonly string[]): fc.Arbitrary<Edit> {
  const pos = fc.nat({ max: 1_000_000 });
  const piece = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...specials) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8, unit: 'binary' }) },
    { weight: 1, arbitrary: fc.constantFrom('\u0000', '\u001b[31m', '\ufeff', '\u202e', '\r', '\t', '\\', '\ud800', '9'.repeat(40), 'x'.repeat(300)) },
  );
  return fc.oneof(
    fc.record({ op: fc.constant('truncate' as const), at: pos }),
    fc.record({ op: fc.constant('delete-line' as const), line: pos }),
    fc.record({ op: fc.constant('duplicate-line' as const), line: pos }),
    fc.record({ op: fc.constant('swap-lines' as const), a: pos, b: pos }),
    fc.record({ op: fc.constant('indent' as const), line: pos, by: fc.integer({ min: -6, max: 6 }) }),
    fc.record({ op: fc.constant('insert' as const), at: pos, text: piece }),
    fc.record({ op: fc.constant('delete' as const), at: pos, len: fc.integer({ min: 1, max: 40 }) }),
    fc.record({ op: fc.constant('replace' as const), at: pos, text: piece }),
  );
}

/** A base text from `bases` with 1..`maxEdits` edits applied. */
export function mutatedArb(bases: readonly string[], specials: readonly string[], maxEdits = 6): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...bases), fc.array(editArb(specials), { minLength: 1, maxLength: maxEdits }))
    .map(([base, edits]) => edits.reduce(applyEdit, base));
}

/** A soup of the format's words and punctuation, joined by spaces and newlines. */
export function soupArb(words: readonly string[], maxWords = 60): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(' ', ' ', ' ', '\n', '\n  ', '')), { maxLength: maxWords })
    .map((parts) => parts.map(([w, sep]) => w + sep).join(''));
}

/** C0/C1 controls and bidi overrides that must never reach a terminal raw (newline and tab allowed). */
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Runs a property under the settings; returns how many inputs ran and how long it took. */
export function runFuzz<T>(name: string, arb: fc.Arbitrary<T>, check: (input: T) => void, s: FuzzSettings = fuzzSettings()): { runs: number; seconds: number; perSecond: number } {
  let runs = 0;
  const started = performance.now();
  fc.assert(
    fc.property(arb, (input) => {
      runs++;
      check(input);
    }),
    { numRuns: s.n, seed: s.seed, plugins: [fc.interruptAfterTimeLimit(s.seconds * 1000, { failOnInterrupt: false })] },
  );
  const seconds = (performance.now() - started) / 1000;
  const perSecond = runs / seconds;
  process.stdout.write(`# fuzz ${name}: ${runs} inputs in ${seconds.toFixed(1)} s (${perSecond.toFixed(0)}/s), seed ${s.seed}${runs < s.n ? `, stopped at the ${s.seconds} s bound` : ''}\n`);
  return { runs, seconds, perSecond };
}
