// Sends nf_tables batches (nl-codec.ts) over NETLINK_NETFILTER and resolves when the kernel acked every
// command of the batch, or rejects with the first errno. In lvsd's own network namespace the socket is in
// this process; for another namespace (tests, benchmarks: `netns` as for nft) a small worker process is
// started there once (`ip netns exec NS node nl-worker.js`) and batches go to it over a pipe.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// The package's own files, not its index: the index loads every family it knows (nl80211, WireGuard: ~110 ms
// of CPU at start as an ES import); these load only what lvsd uses.
import { RawNetlinkSocket } from 'netlink/dist/raw.js';
import { decodeAcks, encodeBatch, type NftOp } from './nl-codec.js';

const NETLINK_NETFILTER = 12;
const ACK_TIMEOUT_MS = 5000;

export class NetlinkBatchError extends Error {
  constructor(readonly errno: number, readonly index: number) {
    super(`nf_tables rejected command ${index + 1} of the batch: errno ${errno}`);
    this.name = 'NetlinkBatchError';
  }
}

/** One socket; one batch in flight at a time (the dataplane serialises its applies). */
export class NetfilterSocket {
  private readonly sock = new RawNetlinkSocket(NETLINK_NETFILTER, { recvBufferSize: 1 << 20, sendBufferSize: 1 << 20 });
  private seq = (Date.now() & 0xffff) << 12;
  private waiting: { seqs: number[]; acked: Set<number>; done: (e?: Error) => void } | undefined;

  constructor() {
    this.sock.on('message', (buf: Buffer) => {
      const w = this.waiting;
      if (w === undefined) return;
      for (const [seq, errno] of decodeAcks(buf)) {
        const i = w.seqs.indexOf(seq);
        if (i < 0) continue;
        if (errno !== 0) {
          w.done(new NetlinkBatchError(errno, i));
          return;
        }
        w.acked.add(seq);
      }
      if (w.acked.size === w.seqs.length) w.done();
    });
  }

  /** Encoded batch → kernel; an errno in any command aborts the whole transaction (the kernel's rule). */
  sendBytes(bytes: Buffer, seqs: number[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`nf_tables: no ack within ${ACK_TIMEOUT_MS} ms`));
      }, ACK_TIMEOUT_MS);
      this.waiting = {
        seqs,
        acked: new Set(),
        done: (e) => {
          clearTimeout(timer);
          this.waiting = undefined;
          if (e === undefined) resolve();
          else reject(e);
        },
      };
      this.sock.send(bytes);
    });
  }

  send(ops: readonly NftOp[]): Promise<void> {
    const { bytes, seqs } = encodeBatch(ops, this.seq);
    this.seq = (this.seq + ops.length + 2) >>> 0;
    return this.sendBytes(bytes, seqs);
  }

  close(): void {
    this.sock.close();
  }
}

/** Writes batches in namespace `netns` through the worker (one line of JSON back per batch). */
class WorkerWriter {
  private child: ChildProcess | undefined;
  private buf = '';
  private readonly queue: { resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(private readonly netns: string) {}

  private start(): ChildProcess {
    if (this.child !== undefined && this.child.exitCode === null) return this.child;
    const worker = fileURLToPath(new URL('./nl-worker.js', import.meta.url));
    const child = spawn('ip', ['netns', 'exec', this.netns, process.execPath, worker], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const p = this.queue.shift();
        const r = JSON.parse(line) as { ok: true } | { ok: false; errno?: number; index?: number; message: string };
        if (r.ok) p?.resolve();
        else p?.reject(r.errno === undefined ? new Error(r.message) : new NetlinkBatchError(r.errno, r.index ?? 0));
      }
    });
    child.on('exit', (code, signal) => {
      for (const p of this.queue.splice(0)) p.reject(new Error(`nf_tables worker in ${this.netns} exited (${String(code ?? signal)})`));
      if (this.child === child) this.child = undefined;
    });
    child.stdin.on('error', () => undefined);
    this.child = child;
    return child;
  }

  open(): void {
    this.start();
  }

  send(ops: readonly NftOp[]): Promise<void> {
    const child = this.start();
    const frame = JSON.stringify(ops.map((o) => ({ cmd: o.cmd, flags: o.flags, payload: o.payload.toString('base64') })));
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject });
      child.stdin?.write(`${frame}\n`);
    });
  }

  close(): void {
    this.child?.stdin?.end();
    this.child = undefined;
  }
}

export interface NftablesNetlink {
  /** One transaction: every op, or none of them. */
  send(ops: readonly NftOp[]): Promise<void>;
  /** Opens the socket (or starts the worker: a process, tens of ms) now, for a send that will follow. */
  open(): void;
  close(): void;
}

/** A writer for lvsd's namespace (netns undefined) or another one. The socket opens at the first send. */
export function netfilterWriter(netns?: string): NftablesNetlink {
  if (netns !== undefined) return new WorkerWriter(netns);
  let sock: NetfilterSocket | undefined;
  return {
    send: (ops) => (sock ??= new NetfilterSocket()).send(ops),
    open: () => {
      sock ??= new NetfilterSocket();
    },
    close: () => {
      sock?.close();
      sock = undefined;
    },
  };
}
