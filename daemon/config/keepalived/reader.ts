// The mapper's bookkeeping: diagnostics (`FILE:LINE: directive: why`), the source map that turns into
// "# from keepalived.conf:12" comments, and BlockReader — every directive of a block must be taken by
// the mapper or it is reported when the block is finished, so nothing is dropped silently.
import type { Pos } from './lexer.js';
import type { Directive } from './parser.js';
import { unsupportedReason } from './unsupported.js';
import { echo } from '../errors.js';

export interface Diagnostic {
  file: string;
  line: number;
  directive: string;
  why: string;
  /**
   * A warning: keepalived itself only warns and the import lost nothing (a stray '}'). Printed like
   * the others, but it does not make the import incomplete (exit 2).
   */
  warning?: true;
}

/** Where each emitted value came from: object → key ('' = the object itself) → position. */
export class SourceMap {
  private readonly map = new WeakMap<object, Map<string, Pos>>();

  at(obj: object, key: string, pos: Pos): void {
    let m = this.map.get(obj);
    if (!m) {
      m = new Map();
      this.map.set(obj, m);
    }
    if (!m.has(key)) m.set(key, pos);
  }

  self(obj: object, pos: Pos): void {
    this.at(obj, '', pos);
  }

  get(obj: object, key: string): Pos | undefined {
    return this.map.get(obj)?.get(key);
  }
}

/**
 * Text quoted from the keepalived.conf as safe to print: a quoted string's escapes make any character, and an
 * ESC sequence or a carriage return in a reason could erase the line on the terminal that says what was lost.
 */
export function shown(text: string): string {
  return echo(text, 4000);
}

export class Context {
  readonly diagnostics: Diagnostic[] = [];
  readonly source = new SourceMap();
  /** Extra comment lines for emitted objects (why a value differs from the keepalived text, …). */
  readonly notes = new WeakMap<object, string[]>();

  constructor(private readonly display: (file: string) => string) {}

  report(pos: Pos, directive: string, why: string): void {
    this.diagnostics.push({ file: shown(this.display(pos.file)), line: pos.line, directive: shown(directive), why: shown(why) });
  }

  reportDirective(d: Directive, why: string): void {
    this.report(d.pos, d.keyword, why);
  }

  /** A warning: nothing is lost (keepalived ignores the same thing). */
  warnDirective(d: Directive, why: string): void {
    this.diagnostics.push({ file: shown(this.display(d.pos.file)), line: d.pos.line, directive: shown(d.keyword), why: shown(why), warning: true });
  }

  note(obj: object, text: string): void {
    const list = this.notes.get(obj) ?? [];
    list.push(shown(text));
    this.notes.set(obj, list);
  }

  displayPos(pos: Pos): string {
    return `${shown(this.display(pos.file))}:${pos.line}`;
  }
}

export class BlockReader {
  private readonly used = new Set<Directive>();

  constructor(
    readonly ctx: Context,
    readonly items: Directive[],
    /** Names the block in "unsupported" reasons, e.g. "vrrp_instance". */
    readonly scope: string,
  ) {}

  /** All directives with one of these keywords, marked as handled. */
  all(...keywords: string[]): Directive[] {
    const out = this.items.filter((d) => keywords.includes(d.keyword));
    for (const d of out) this.used.add(d);
    return out;
  }

  /** The last directive with one of these keywords (keepalived: the last one wins); all are marked. */
  last(...keywords: string[]): Directive | undefined {
    const all = this.all(...keywords);
    return all[all.length - 1];
  }

  has(...keywords: string[]): boolean {
    return this.last(...keywords) !== undefined;
  }

  /** Marks a directive as handled (for callers that walk `items` themselves). */
  take(d: Directive): void {
    this.used.add(d);
  }

  /** Reports these keywords with a specific reason and marks them handled. */
  drop(why: string, ...keywords: string[]): void {
    for (const d of this.all(...keywords)) this.ctx.reportDirective(d, why);
  }

  /** Marks these keywords as handled without a report: they have no effect to carry over. */
  ignore(...keywords: string[]): void {
    this.all(...keywords);
  }

  /** Marks everything as handled: the whole block was rejected and reported once by the caller. */
  discard(): void {
    for (const d of this.items) this.used.add(d);
  }

  /** Reports everything not taken. */
  finish(): void {
    for (const d of this.items) {
      if (this.used.has(d)) continue;
      this.used.add(d);
      this.ctx.reportDirective(d, unsupportedReason(this.scope, d.keyword));
    }
  }

  // ---- typed argument helpers: they report a bad value and return undefined -------------------

  int(d: Directive | undefined, min: number, max: number, index = 0): number | undefined {
    if (!d) return undefined;
    const raw = d.args[index];
    const v = Number(raw);
    if (raw === undefined || !/^-?\d+$/.test(raw) || v < min || v > max) {
      this.ctx.reportDirective(d, `${raw ?? '(missing)'} is not an integer in ${min}..${max}; not carried over`);
      return undefined;
    }
    return v;
  }

  /** keepalived <TIMER>: seconds, fractions allowed; returned as an lvsd duration string. */
  timer(d: Directive | undefined, index = 0): string | undefined {
    if (!d) return undefined;
    const raw = d.args[index];
    if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw)) {
      this.ctx.reportDirective(d, `${raw ?? '(missing)'} is not a number of seconds; not carried over`);
      return undefined;
    }
    return seconds(Number(raw));
  }

  str(d: Directive | undefined, index = 0): string | undefined {
    if (!d) return undefined;
    const raw = d.args[index];
    if (raw === undefined) this.ctx.reportDirective(d, 'missing value; not carried over');
    return raw;
  }

  /** keepalived <BOOL>: no argument = true. */
  bool(d: Directive | undefined): boolean | undefined {
    if (!d) return undefined;
    const raw = d.args[0]?.toLowerCase();
    if (raw === undefined) return true;
    if (['on', 'true', 'yes'].includes(raw)) return true;
    if (['off', 'false', 'no'].includes(raw)) return false;
    this.ctx.reportDirective(d, `${raw} is not on|off|true|false|yes|no; not carried over`);
    return undefined;
  }
}

/** Seconds → the shortest exact lvsd duration ("1s", "1500ms"). */
export function seconds(s: number): string {
  if (Number.isInteger(s)) return `${s}s`;
  const ms = Math.round(s * 1000);
  return `${ms}ms`;
}
