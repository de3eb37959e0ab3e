// What `lvsd top` draws, as pure functions: the frame (a header line, then `lvsd status`'s view with the
// dataplane's rates), the ANSI that redraws it in place on a terminal, and what a key press means.
// top.ts does the I/O (admin socket, timers, the terminal).
import type { DirectorSnapshot } from '../director/snapshot.js';
import { renderHeader, renderTable, renderVrrp } from './status-render.js';

export interface FrameOptions {
  /** When the frame is drawn (the header shows it, in UTC like the snapshot's times). */
  at: Date;
  intervalSec: number;
  /** The terminal's size; absent when stdout is not a terminal (no clipping then). */
  size?: { columns: number; rows: number };
}

/** Why there is no snapshot this time (the daemon went away, the socket refused): shown in the frame. */
export interface FrameProblem {
  problem: string;
}

function clock(d: Date): string {
  return d.toISOString().slice(11, 19);
}

/** The lines of one frame; clipped to the terminal's width and height when there is one. */
export function topFrame(read: DirectorSnapshot | FrameProblem, opts: FrameOptions): string[] {
  const every = `every ${opts.intervalSec} s`;
  const keys = opts.size === undefined ? '' : ' · q quits';
  let lines: string[];
  if ('problem' in read) {
    lines = [`lvsd top · ${clock(opts.at)} UTC · ${every}${keys}`, '', `${read.problem} — trying again ${every}`];
  } else {
    lines = [`lvsd top · ${read.node} · ${clock(opts.at)} UTC · ${every}${keys}`, ...renderHeader(read).slice(1), '', ...renderVrrp(read), '', ...renderTable(read, { rates: true })];
  }
  if (opts.size === undefined) return lines;
  const { columns, rows } = opts.size;
  const shown = lines.length > rows ? [...lines.slice(0, Math.max(0, rows - 1)), `… ${lines.length - rows + 1} more lines (a taller terminal shows them)`] : lines;
  return shown.map((l) => (l.length > columns ? l.slice(0, Math.max(0, columns - 1)) + '…' : l));
}

// ANSI: the alternate screen keeps the operator's scrollback intact, as top(1) does.
export const ENTER_SCREEN = '\x1b[?1049h\x1b[?25l';
export const LEAVE_SCREEN = '\x1b[?25h\x1b[?1049l';

/** Redraws in place: cursor home, each line cleared to its end, everything below cleared (no flicker of a full clear). */
export function redraw(lines: readonly string[]): string {
  return `\x1b[H${lines.map((l) => `${l}\x1b[K`).join('\r\n')}\x1b[J`;
}

export type KeyAction = 'quit' | 'refresh' | null;

/** q, Q, Ctrl-C (raw mode delivers it as a byte, not a signal) and Ctrl-D quit; space or r redraws now. */
export function keyAction(data: string): KeyAction {
  for (const ch of data) {
    if (ch === 'q' || ch === 'Q' || ch === '\x03' || ch === '\x04') return 'quit';
  }
  if (data === ' ' || data === 'r' || data === 'R') return 'refresh';
  return null;
}
