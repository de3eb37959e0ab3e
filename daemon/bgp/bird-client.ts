// BIRD's control socket over node:net: one connection, one command in flight (BIRD answers in order, and
// a command queue keeps a reload's configure from interleaving with an enable), a timeout per command.
// Errors say what an operator must fix: the socket missing (BIRD not running, or another path), no
// permission (lvsd's user is not in BIRD's group), or BIRD refusing the command (its own words).
import { createConnection, type Socket } from 'node:net';
import { ReplyFramer, isError, replyText, type BirdReply } from './reply.js';

export type BirdErrorKind = 'socket-missing' | 'permission' | 'refused-connection' | 'timeout' | 'closed' | 'command';

export class BirdError extends Error {
  constructor(
    readonly kind: BirdErrorKind,
    message: string,
    /** BIRD's reply code for kind 'command'. */
    readonly code?: number,
  ) {
    super(message);
    this.name = 'BirdError';
  }
}

export interface BirdClientOptions {
  socket: string;
  /** Per command, connecting included (default 5 s). */
  timeoutMs?: number;
}

interface Pending {
  command: string;
  resolve(r: BirdReply): void;
  reject(e: Error): void;
}

export class BirdClient {
  private conn: Socket | null = null;
  private ready: Promise<void> | null = null;
  private framer = new ReplyFramer();
  /** The command waiting for its reply (the greeting counts as one, with command ''). */
  private waiting: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly opts: BirdClientOptions) {}

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? 5000;
  }

  /** Runs one command after those before it; rejects with a BirdError when BIRD refuses it (8xxx/9xxx). */
  command(command: string): Promise<BirdReply> {
    if (/[\r\n]/.test(command)) return Promise.reject(new BirdError('command', `a BIRD command is one line: ${JSON.stringify(command)}`));
    const run = this.queue.then(() => this.send(command));
    this.queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.closed = true;
    this.drop(new BirdError('closed', 'BIRD client closed'));
  }

  private async send(command: string): Promise<BirdReply> {
    if (this.closed) throw new BirdError('closed', 'BIRD client closed');
    await this.connect();
    const conn = this.conn;
    if (conn === null) throw new BirdError('closed', `BIRD's socket ${this.opts.socket} closed`);
    const reply = await this.await(command, () => conn.write(`${command}\n`));
    if (isError(reply)) throw new BirdError('command', `BIRD refused "${command}": ${replyText(reply)} (${String(reply.code)})`, reply.code);
    return reply;
  }

  private connect(): Promise<void> {
    if (this.ready !== null) return this.ready;
    this.ready = new Promise<void>((resolve, reject) => {
      const conn = createConnection(this.opts.socket);
      this.conn = conn;
      this.framer = new ReplyFramer();
      conn.setEncoding('utf8');
      // A connection already dropped may still report its close: only the current one counts.
      const current = (): boolean => this.conn === conn;
      conn.on('data', (chunk: string) => { if (current()) this.data(chunk); });
      conn.on('error', (e: NodeJS.ErrnoException) => { if (current()) this.drop(this.describe(e)); });
      conn.on('close', () => { if (current()) this.drop(new BirdError('closed', `BIRD closed its socket ${this.opts.socket}`)); });
      // BIRD greets first ("0001 BIRD 2.0.12 ready."): connected once the greeting is in.
      this.await('', () => true).then(() => { resolve(); }, reject);
    });
    return this.ready;
  }

  private describe(e: NodeJS.ErrnoException): BirdError {
    const s = this.opts.socket;
    switch (e.code) {
      case 'ENOENT':
        return new BirdError('socket-missing', `BIRD's control socket ${s} does not exist: is bird running (systemctl status bird), and is bgp.socket its -s path?`);
      case 'EACCES':
      case 'EPERM':
        return new BirdError('permission', `no permission on BIRD's control socket ${s}: run lvsd as root or in BIRD's group (Debian: bird)`);
      case 'ECONNREFUSED':
        return new BirdError('refused-connection', `nothing listens on BIRD's control socket ${s} (a stale socket: bird is not running)`);
      default:
        return new BirdError('closed', `BIRD's control socket ${s}: ${e.message}`);
    }
  }

  private await(command: string, write: () => unknown): Promise<BirdReply> {
    return new Promise<BirdReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.drop(new BirdError('timeout', `BIRD did not answer "${command || 'hello'}" within ${String(this.timeoutMs)} ms on ${this.opts.socket}`));
      }, this.timeoutMs);
      this.waiting = {
        command,
        resolve: (r) => { clearTimeout(timer); resolve(r); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
      write();
    });
  }

  private data(chunk: string): void {
    let replies: BirdReply[];
    try {
      replies = this.framer.push(chunk);
    } catch (e) {
      this.drop(new BirdError('closed', `BIRD's socket ${this.opts.socket}: ${(e as Error).message}`));
      return;
    }
    for (const r of replies) {
      const w = this.waiting;
      this.waiting = null;
      w?.resolve(r);
    }
  }

  /** Fails the command in flight and forgets the connection: the next command connects again. */
  private drop(err: BirdError): void {
    const w = this.waiting;
    this.waiting = null;
    const conn = this.conn;
    this.conn = null;
    this.ready = null;
    conn?.destroy();
    w?.reject(err);
  }
}
