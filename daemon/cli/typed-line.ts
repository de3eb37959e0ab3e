// What a terminal in raw mode hands `lvsd user add` while a password is typed without echo: every key as
// it was pressed, with none of the editing the terminal's line discipline would do. This does that editing
// (Backspace, Ctrl-U) and sees the keys that end (Enter, Ctrl-D) or cancel (Ctrl-C) the line, so a typo
// fixed with Backspace does not end up inside the stored password. Pure; user.ts feeds it the keys.

export type TypedLine = { state: 'more' } | { state: 'done'; line: string } | { state: 'cancelled' };

// an escape sequence (arrow keys, Home, a function key): a terminal's line discipline has no use for them either
const ESCAPE = /^\x1b(\[[0-?]*[ -/]*[@-~]|O.|.)?/;

/** The line typed so far in `keys` (everything read from the terminal since the prompt). */
export function typedLine(keys: string): TypedLine {
  let line: string[] = [];
  for (let i = 0; i < keys.length; ) {
    const c = keys[i] ?? '';
    if (c === '\x1b') {
      i += ESCAPE.exec(keys.slice(i))?.[0].length ?? 1;
      continue;
    }
    const ch = String.fromCodePoint(keys.codePointAt(i) ?? 0);
    i += ch.length;
    if (ch === '\r' || ch === '\n' || ch === '\x04') return { state: 'done', line: line.join('') };
    if (ch === '\x03') return { state: 'cancelled' };
    if (ch === '\x7f' || ch === '\b') line = line.slice(0, -1);
    else if (ch === '\x15') line = [];
    else if (ch >= ' ') line.push(ch);
  }
  return { state: 'more' };
}
