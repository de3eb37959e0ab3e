// How deep a config may nest. The yaml package composes nodes recursively, and so do the checks after it
// (shape, semantics, positions, structuredClone): a file of 10,000 '[' ran them out of stack, and the
// operator read "Maximum call stack size exceeded" at some column. The bound is checked while the text is
// parsed (the parser's own stack of open collections, so the count is exact and a deep file costs only
// the first MAX_CONFIG_DEPTH levels to refuse) and again on the value it yields (aliases can stack
// anchored structures deeper than any one of them is written).
import { Composer, Lexer, Parser, YAMLParseError, type Document, type DocumentOptions, type LineCounter, type ParseOptions, type SchemaOptions } from 'yaml';
import type { PathSegment } from './errors.js';

/**
 * Collections nested in collections, at most. lvsd's deepest real path is about 7 (virtual_servers[0]
 * .real_servers[0].check.http.expect.status[0]); 64 is far from both that and the stack's limit.
 */
export const MAX_CONFIG_DEPTH = 64;

export type BoundedParse = { ok: true; doc: Document.Parsed } | { ok: false; offset: number };

/**
 * parseDocument with a depth bound: the lexer's tokens are fed to the parser one by one (as the package's
 * own Parser.parse does) and the parse stops at the first collection opened MAX_CONFIG_DEPTH deep, giving
 * its offset. Like parseDocument, a second document in the text is an error (MULTIPLE_DOCS).
 */
export function parseBounded(text: string, lc: LineCounter, options: ParseOptions & DocumentOptions & SchemaOptions, max = MAX_CONFIG_DEPTH): BoundedParse {
  const parser = new Parser(lc.addNewLine);
  let tooDeep: number | undefined;
  function* tokens(): Generator<ReturnType<Parser['next']> extends Generator<infer T> ? T : never> {
    lc.addNewLine(0);
    for (const lexeme of new Lexer().lex(text)) {
      yield* parser.next(lexeme);
      // the stack holds the document, then each open collection (and at most one scalar being read)
      if (parser.stack.length - 1 > max) {
        tooDeep = parser.stack[parser.stack.length - 1]?.offset ?? parser.offset;
        return;
      }
    }
    yield* parser.end();
  }
  const composer = new Composer(options);
  let doc: Document.Parsed | undefined;
  for (const d of composer.compose(tokens(), true, text.length)) {
    if (doc === undefined) doc = d;
    else {
      // as parseDocument does (its wording)
      doc.errors.push(new YAMLParseError([d.range[0], d.range[1]], 'MULTIPLE_DOCS', 'Source contains multiple documents; please use YAML.parseAllDocuments()'));
      break;
    }
  }
  if (tooDeep !== undefined) return { ok: false, offset: tooDeep };
  if (doc === undefined) throw new Error('yaml: the composer yielded no document'); // compose(…, true) always ends with one
  return { ok: true, doc };
}

/** The path of the first value nested deeper than `max` collections (walked without recursion), or undefined. */
export function tooDeepPath(value: unknown, max = MAX_CONFIG_DEPTH): PathSegment[] | undefined {
  const stack: { v: unknown; path: PathSegment[] }[] = [{ v: value, path: [] }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, path } = top;
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= max) return path;
    if (Array.isArray(v)) v.forEach((item, i) => stack.push({ v: item, path: [...path, i] }));
    else for (const [k, item] of Object.entries(v)) stack.push({ v: item, path: [...path, k] });
  }
  return undefined;
}

/** The one message for both checks. */
export function tooDeepMessage(max = MAX_CONFIG_DEPTH): string {
  return `nested deeper than ${max} levels here; an lvsd config nests a few levels (is this a generated or corrupted file?) — not parsed`;
}
