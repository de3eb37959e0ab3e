// One long-lived `nft -i` process: a change costs a line on its stdin, not a process start
// (notes: most of a 22 ms one-service update was fork+exec). Each line is one transaction in nft's own
// syntax, its commands joined by `;` (text, not JSON: nft-text.ts says why). After each batch we send a sentinel line that nft rejects at parse time, before touching
// its cache (measured: 0.3 ms, where a `list` after a change re-reads the whole ruleset, ~60 ms at 1,000
// services). Its error on stderr marks the batch as done; whatever nft wrote to stderr before it is the
// batch's own error. One pipe carries both, so their order is certain.
// Big batches (a full table) go through `nft -f FILE` instead: nft's interactive line reader is slow on
// megabyte lines (measured 0.7–0.9 s against 0.27 s for the same 1,000 × 10 transaction from a file).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** A line nft refuses at its first character, before it reads its cache or the kernel. */
const SENTINEL = '}lvsd-sync';
/** nft's whole answer to the sentinel line. */
const SENTINEL_END = "Error: syntax error, unexpected '}'\n}lvsd-sync\n^\n";
const FILE_THRESHOLD = 32 * 1024;

export class NftError extends Error {
  constructor(readonly stderr: string, readonly batchBytes: number) {
    super(`nft rejected the transaction (${batchBytes} bytes): ${stderr.trim().split('\n').filter(Boolean).join('; ')}`);
    this.name = 'NftError';
  }
}

interface Pending {
  resolve: () => void;
  reject: (e: Error) => void;
  bytes: number;
}

export interface NftShellOptions {
  /** Path or name of the nft binary. */
  nft?: string;
  /** Run nft inside this network namespace (`ip netns exec NAME nft …`). */
  netns?: string;
}

export class NftShell {
  private child: ChildProcess | undefined;
  private stdoutBuf = '';
  private stderrBuf = '';
  private readonly queue: Pending[] = [];
  private readonly argv: string[];

  constructor(private readonly opts: NftShellOptions = {}) {
    const nft = opts.nft ?? 'nft';
    this.argv = opts.netns === undefined ? [nft] : ['ip', 'netns', 'exec', opts.netns, nft];
  }

  /** The pid of the writer process (for telling our own changes from others' in `nft monitor`). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private start(): ChildProcess {
    if (this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null) return this.child;
    const [cmd = 'nft', ...args] = this.argv;
    const child = spawn(cmd, [...args, '-i'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.stdoutBuf = '';
    this.stderrBuf = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', () => undefined);
    child.stderr.on('data', (d: string) => {
      this.stderrBuf += d;
      let end: number;
      while ((end = this.stderrBuf.indexOf(SENTINEL_END)) >= 0) {
        const chunk = this.stderrBuf.slice(0, end + SENTINEL_END.length);
        this.stderrBuf = this.stderrBuf.slice(end + SENTINEL_END.length).replace(/^\n/, '');
        this.settle(chunk.slice(0, -SENTINEL_END.length));
      }
    });
    child.stdin.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      const err = new Error(`nft exited (${String(code ?? signal)}): ${this.stderrBuf.trim()}`);
      for (const p of this.queue.splice(0)) p.reject(err);
      if (this.child === child) this.child = undefined;
    });
    child.on('error', (e) => {
      for (const p of this.queue.splice(0)) p.reject(e);
    });
    this.child = child;
    return child;
  }

  private settle(stderr: string): void {
    const p = this.queue.shift();
    if (p === undefined) return;
    if (/Error/.test(stderr)) p.reject(new NftError(stderr, p.bytes));
    else p.resolve();
  }

  /**
   * Sends one transaction in nft's own syntax (nft-text.ts: one command a line); resolves when the kernel
   * accepted it. Up to 32 KB it is one line to the long-lived process, larger (a full table) `nft -f FILE`.
   * Structural changes and full programs take this path; a change of a service's real servers goes by
   * netlink (nl-writer.ts).
   */
  apply(text: string): Promise<void> {
    if (text.length > FILE_THRESHOLD) return this.applyFile(text);
    const line = text.trimEnd().split('\n').join('; ');
    const child = this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject, bytes: text.length });
      child.stdin?.write(`${line}\n${SENTINEL}\n`);
    });
  }

  /**
   * One transaction through `nft -f FILE` whatever its size: a fresh table's structure (fresh.ts), tens of KB
   * at 100 services, which the interactive process reads slowly as one line (measured at 100 × 10: 104 ms
   * against 34 ms for a larger text from a file), and which comes before that process has any other use.
   */
  async applyFile(text: string): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'lvsd-nft-'));
    const file = join(dir, 'batch.nft');
    try {
      writeFileSync(file, text);
      const [cmd = 'nft', ...args] = this.argv;
      await run(cmd, [...args, '-f', file], { maxBuffer: 64 * 1024 * 1024 });
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr;
      throw stderr === undefined ? e : new NftError(stderr, text.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** `nft -j list table inet NAME`, parsed; undefined when the table does not exist. */
  async listTable(table: string): Promise<unknown> {
    const [cmd = 'nft', ...args] = this.argv;
    try {
      const { stdout } = await run(cmd, [...args, '-j', 'list', 'table', 'inet', table], { maxBuffer: 256 * 1024 * 1024 });
      return JSON.parse(stdout) as unknown;
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? '';
      if (/No such file or directory/.test(stderr)) return undefined;
      throw e;
    }
  }

  /** The names of the inet tables. */
  async listTables(): Promise<string[]> {
    const [cmd = 'nft', ...args] = this.argv;
    const { stdout } = await run(cmd, [...args, '-j', 'list', 'tables', 'inet'], { maxBuffer: 16 * 1024 * 1024 });
    const doc = JSON.parse(stdout) as { nftables?: { table?: { name?: unknown } }[] };
    return (doc.nftables ?? []).flatMap((i) => (typeof i.table?.name === 'string' ? [i.table.name] : []));
  }

  /** Runs a one-off command in the same namespace as nft (e.g. reading /proc/net/nf_conntrack). */
  async read(file: string): Promise<string> {
    // In our own namespace no process is needed (this runs after every apply that takes a server out).
    if (this.opts.netns === undefined) return readFile(file, 'utf8');
    const { stdout } = await run('ip', ['netns', 'exec', this.opts.netns, 'cat', file], { maxBuffer: 512 * 1024 * 1024 });
    return stdout;
  }

  /** Runs another tool (conntrack) in nft's namespace; resolves with its exit code and output, rejects only if it cannot start. */
  async tool(cmd: string, args: string[]): Promise<{ code: number; stderr: string }> {
    const argv = this.opts.netns === undefined ? [cmd, ...args] : ['ip', 'netns', 'exec', this.opts.netns, cmd, ...args];
    const [bin = cmd, ...rest] = argv;
    try {
      const { stderr } = await run(bin, rest);
      return { code: 0, stderr };
    } catch (e) {
      const err = e as { code?: unknown; stderr?: string };
      if (typeof err.code !== 'number') throw e;
      return { code: err.code, stderr: err.stderr ?? '' };
    }
  }

  close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => {
        resolve();
      });
      child.stdin?.end();
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
    });
  }
}
