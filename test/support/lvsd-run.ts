// Runs the compiled `lvsd run` and follows its JSON log lines, for the CLI tests. `prefix` runs it through
// another command first (e.g. `ip netns exec NS`), so the daemon can live in a test namespace.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../daemon/cli/main.js', import.meta.url));

export interface LogLine {
  level: string;
  msg: string;
  [k: string]: unknown;
}

export interface LvsdRun {
  child: ChildProcess;
  lines: LogLine[];
  /** The last 8 KiB lvsd wrote to stderr (a crash's stack goes there, not into the JSON log). */
  stderr: () => string;
  /** Resolves with the first log line whose msg matches (already seen or future). */
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<LogLine>;
  exit: Promise<number | null>;
}

/** `bin`: another build of the CLI (the guest runs a one-file bundle: test/vm/bundle.ts). */
export function startRun(args: string[], prefix: string[] = [], bin = BIN): LvsdRun {
  const cmd = prefix[0] ?? process.execPath;
  const pre = prefix.length > 0 ? [...prefix.slice(1), process.execPath] : [];
  const child = spawn(cmd, [...pre, bin, 'run', ...args], { env: { ...process.env, LVSD_LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: LogLine[] = [];
  const waiters: { re: RegExp; resolve: (l: LogLine) => void }[] = [];
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, nl)) as LogLine;
      buf = buf.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.re.test(line.msg)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  // read, so that a chatty stderr never fills the pipe and blocks lvsd; the tail is kept for failure messages
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-8192);
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => { r(code); }));
  const waitFor = (re: RegExp, timeoutMs = 60_000): Promise<LogLine> => {
    const found = lines.find((l) => re.test(l.msg));
    if (found) return Promise.resolve(found);
    return new Promise<LogLine>((resolve, reject) => {
      const t = setTimeout(() => { reject(new Error(`no log line matching ${String(re)}; got:\n${lines.map((l) => l.msg).join('\n')}`)); }, timeoutMs);
      waiters.push({ re, resolve: (l) => { clearTimeout(t); resolve(l); } });
    });
  };
  return { child, lines, stderr: () => err, waitFor, exit };
}
