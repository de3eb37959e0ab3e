// The one seam between the IPVS client and the kernel: send commands, get the reply payloads.
// The real one uses the npm `netlink` package's RawNetlinkSocket for the socket and does its own
// framing: the package's higher layer matches replies one request at a time, can reassemble only one
// multipart reply at once and turns kernel errors into bare strings. Doing it here lets a batch of
// changes travel many messages per sendmsg() (the kernel handles each message of a datagram in
// order and acks each one), with every errno kept as a number.
// The package's own files, not its index: the index loads every family it knows (nl80211, WireGuard: ~110 ms
// of CPU at start as an ES import); these load only what lvsd uses.
import { Protocol } from 'netlink/dist/constants.js';
import { RawNetlinkSocket } from 'netlink/dist/raw.js';
import { IPVS_GENL_NAME, IPVS_GENL_VERSION } from './constants.js';
import { IpvsUnavailable } from './errors.js';
import { Attrs, str } from '../net/nlattr.js';

/** A kernel error reply: the errno of NLMSG_ERROR (positive). */
export class NetlinkErrno extends Error {
  constructor(readonly errno: number) {
    super(`netlink error ${errno}`);
  }
}

export interface IpvsRequest {
  cmd: number;
  payload: Buffer;
}

export interface IpvsTransport {
  /**
   * Sends one IPVS command and resolves with the attribute payload (after the genl header) of each reply
   * message: none for an acked change, one for a GET, many for a dump. Rejects with NetlinkErrno.
   */
  request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]>;
  /** Many changes, in order; one result per request (its replies, or the NetlinkErrno it got). */
  requestMany(reqs: readonly IpvsRequest[]): Promise<(Buffer[] | NetlinkErrno)[]>;
  /**
   * Many dumps of one command (a table read: one GET_DEST per service), in any order; one result per payload
   * (its reply payloads, or the NetlinkErrno it got). Optional: without it the client sends them by request().
   */
  dumpMany?(cmd: number, payloads: readonly Buffer[]): Promise<(Buffer[] | NetlinkErrno)[]>;
  close(): void;
}

const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const NLM_F_REQUEST = 1;
const NLM_F_ACK = 4;
const NLM_F_DUMP = 0x300;
const GENL_ID_CTRL = 16;
const CTRL_CMD_GETFAMILY = 3;
const CTRL_ATTR_FAMILY_ID = 1;
const CTRL_ATTR_FAMILY_NAME = 2;
const ENOENT = 2;

function message(type: number, flags: number, seq: number, port: number, cmd: number, version: number, payload: Buffer): Buffer {
  const len = 16 + 4 + payload.length;
  const b = Buffer.alloc(len);
  b.writeUInt32LE(len, 0);
  b.writeUInt16LE(type, 4);
  b.writeUInt16LE(flags, 6);
  b.writeUInt32LE(seq, 8);
  b.writeUInt32LE(port, 12);
  b.writeUInt8(cmd, 16);
  b.writeUInt8(version, 17);
  payload.copy(b, 20);
  return b;
}

interface Pending {
  parts: Buffer[];
  resolve: (parts: Buffer[]) => void;
  reject: (e: Error) => void;
  /** performance.now() after which the request has failed. */
  deadline: number;
  timeoutMs: number;
}

/** One netlink socket with its own request/reply matching by sequence number. */
class Conn {
  private seq = 1;
  private readonly pending = new Map<number, Pending>();
  /** Last (acked) seq of a datagram → the seqs sent before it without an ack request. */
  private readonly groups = new Map<number, number[]>();
  /** One timer per socket for every request's deadline, not one per request (a table read makes thousands). */
  private watchdog: NodeJS.Timeout | undefined;
  readonly port: number;

  constructor(readonly raw: RawNetlinkSocket) {
    this.port = raw.address().port;
    raw.on('message', (buf) => {
      this.receive(buf);
    });
    raw.on('error', (e) => {
      // ENOBUFS and the like: replies were lost, so no pending request can be trusted.
      const lost = [...this.pending.values()];
      for (const seq of [...this.pending.keys()]) this.settle(seq);
      this.groups.clear();
      for (const p of lost) p.reject(e);
    });
    raw.unref();
  }

  nextSeq(): number {
    const s = this.seq;
    this.seq = (this.seq % 0x7fffffff) + 1;
    return s;
  }

  private receive(buf: Buffer): void {
    let off = 0;
    while (off + 16 <= buf.length) {
      const len = buf.readUInt32LE(off);
      if (len < 16 || off + len > buf.length) break;
      const type = buf.readUInt16LE(off + 4);
      const seq = buf.readUInt32LE(off + 8);
      const p = this.pending.get(seq);
      if (p !== undefined) {
        if (type === NLMSG_ERROR) {
          const errno = buf.readInt32LE(off + 16);
          this.settle(seq);
          if (errno < 0) p.reject(new NetlinkErrno(-errno));
          else p.resolve(p.parts);
          // The kernel handles a datagram's messages in order: once its last message is answered, every
          // earlier one without an ack request that has not reported an error has succeeded.
          const group = this.groups.get(seq);
          if (group !== undefined) {
            this.groups.delete(seq);
            for (const s of group) {
              const q = this.pending.get(s);
              if (q === undefined) continue;
              this.settle(s);
              q.resolve(q.parts);
            }
          }
        } else if (type === NLMSG_DONE) {
          this.settle(seq);
          p.resolve(p.parts);
        } else {
          // A view, not a copy: the binding hands each datagram in a buffer of its own.
          p.parts.push(buf.subarray(off + 20, off + len));
        }
      }
      off += (len + 3) & ~3;
    }
  }

  private settle(seq: number): void {
    this.pending.delete(seq);
    // The watchdog stays armed (unreferenced, it holds nothing): a socket whose requests go one at a time (a
    // dump socket) would otherwise clear and set a timer for each.
    if (this.pending.size === 0) this.raw.unref();
  }

  private arm(delayMs: number): void {
    if (this.watchdog !== undefined) return;
    // Unreferenced: while a request waits, the socket itself keeps the process alive.
    this.watchdog = setTimeout(() => {
      this.watchdog = undefined;
      this.expire();
    }, delayMs);
    this.watchdog.unref();
  }

  /** Fails every request past its deadline; re-arms for the next one. */
  private expire(): void {
    const now = performance.now();
    let next = Infinity;
    for (const [seq, p] of this.pending) {
      if (p.deadline > now) {
        next = Math.min(next, p.deadline);
        continue;
      }
      this.groups.delete(seq);
      this.settle(seq);
      p.reject(new Error(`netlink: no reply in ${p.timeoutMs} ms (seq ${seq})`));
    }
    if (next !== Infinity) this.arm(Math.max(1, next - now));
  }

  /**
   * Sends pre-framed messages in one datagram; resolves each by its sequence number. With `ackLast`,
   * only the last frame asks for an ack (the others report only errors): one reply per datagram.
   */
  sendFramed(frames: { seq: number; buf: Buffer }[], timeoutMs: number, ackLast = false): Promise<Buffer[]>[] {
    if (this.pending.size === 0) this.raw.ref();
    const last = frames.at(-1);
    if (ackLast && last !== undefined) this.groups.set(last.seq, frames.slice(0, -1).map((f) => f.seq));
    const deadline = performance.now() + timeoutMs;
    const promises = frames.map(
      (f) =>
        new Promise<Buffer[]>((resolve, reject) => {
          this.pending.set(f.seq, { parts: [], resolve, reject, deadline, timeoutMs });
        }),
    );
    this.arm(timeoutMs);
    this.raw.send(
      frames.map((f) => f.buf),
      {},
      (err) => {
        if (err === undefined) return;
        if (last !== undefined) this.groups.delete(last.seq);
        for (const f of frames) {
          const p = this.pending.get(f.seq);
          if (p === undefined) continue;
          this.settle(f.seq);
          p.reject(err);
        }
      },
    );
    return promises;
  }

  /**
   * Dumps `payloads[k]` for each k in `which`, one after another, each sent from the end of the last: no promise,
   * timer or queue per dump (a table read makes a thousand). Results land in `out[k]`.
   */
  dumpSeries(type: number, cmd: number, version: number, payloads: readonly Buffer[], which: readonly number[], out: (Buffer[] | NetlinkErrno)[], timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let i = 0;
      const next = (): void => {
        const k = which[i++];
        if (k === undefined) {
          resolve();
          return;
        }
        const seq = this.nextSeq();
        if (this.pending.size === 0) this.raw.ref();
        this.pending.set(seq, {
          parts: [],
          deadline: performance.now() + timeoutMs,
          timeoutMs,
          resolve: (parts) => {
            out[k] = parts;
            next();
          },
          reject: (e) => {
            if (!(e instanceof NetlinkErrno)) {
              reject(e);
              return;
            }
            out[k] = e;
            next();
          },
        });
        this.arm(timeoutMs);
        this.raw.send([message(type, NLM_F_REQUEST | NLM_F_DUMP, seq, this.port, cmd, version, payloads[k] ?? Buffer.alloc(0))], {}, (err) => {
          const p = err === undefined ? undefined : this.pending.get(seq);
          if (p === undefined) return;
          this.settle(seq);
          p.reject(err as Error);
        });
      };
      next();
    });
  }

  request(type: number, cmd: number, version: number, payload: Buffer, dump: boolean, timeoutMs: number): Promise<Buffer[]> {
    const seq = this.nextSeq();
    const flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
    const [p] = this.sendFramed([{ seq, buf: message(type, flags, seq, this.port, cmd, version, payload) }], timeoutMs);
    if (p === undefined) throw new Error('netlink: nothing sent');
    return p;
  }

  close(): void {
    for (const p of this.pending.values()) p.reject(new Error('netlink socket closed'));
    this.pending.clear();
    this.groups.clear();
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.raw.close();
  }
}

export interface NetlinkTransportOptions {
  /** Per-request timeout (default 5 s): a lost reply must not hang the daemon. */
  timeoutMs?: number;
  /** Sockets used for dumps in parallel (default 4); a netlink socket runs one dump at a time. */
  dumpSockets?: number;
  /** Messages per sendmsg() in requestMany (default 64). */
  messagesPerDatagram?: number;
  /** Datagrams in flight in requestMany (default 4): their replies must fit the socket's receive buffer. */
  datagramsInFlight?: number;
}

function openConn(): Conn {
  return new Conn(new RawNetlinkSocket(Protocol.GENERIC, { recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 }));
}

/** Generic netlink sockets bound to family "IPVS": one for changes, a small pool for dumps. */
export class NetlinkTransport implements IpvsTransport {
  private dumpQueues: Promise<unknown>[] = [];
  /** Opened by the first dump (dumpConns()): a restart that reads its table through lvsd_ipvs needs none. */
  private dumpPool: Conn[] | undefined;
  private nextDump = 0;
  private readonly perDatagram: number;
  private readonly inFlight: number;
  private readonly dumpSockets: number;
  private closed = false;

  private constructor(
    private readonly conn: Conn,
    readonly familyId: number,
    private readonly timeoutMs: number,
    opts: NetlinkTransportOptions,
  ) {
    this.perDatagram = opts.messagesPerDatagram ?? 64;
    this.inFlight = opts.datagramsInFlight ?? 4;
    this.dumpSockets = Math.max(1, opts.dumpSockets ?? 4);
  }

  /**
   * The dump sockets, opened when first needed: each open costs a socket and its 4 MiB buffers (114–212 ms for
   * the four on a restart in the QEMU guest), which a restart reading its table through the addon never uses.
   */
  private dumpConns(): Conn[] {
    if (this.dumpPool !== undefined) return this.dumpPool;
    if (this.closed) throw new Error('netlink transport closed');
    const pool: Conn[] = [];
    try {
      for (let i = 0; i < this.dumpSockets; i++) pool.push(openConn());
    } catch (e) {
      for (const d of pool) d.close();
      throw e;
    }
    this.dumpPool = pool;
    this.dumpQueues = pool.map(() => Promise.resolve());
    return pool;
  }

  static async open(opts: NetlinkTransportOptions = {}): Promise<NetlinkTransport> {
    let conn: Conn;
    try {
      conn = openConn();
    } catch (e) {
      throw new IpvsUnavailable(`cannot open a generic netlink socket: ${(e as Error).message}`);
    }
    const timeoutMs = opts.timeoutMs ?? 5000;
    try {
      const familyId = await resolveFamily(conn, timeoutMs);
      return new NetlinkTransport(conn, familyId, timeoutMs, opts);
    } catch (e) {
      conn.close();
      throw e;
    }
  }

  request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]> {
    if (!dump) return this.conn.request(this.familyId, cmd, IPVS_GENL_VERSION, payload, false, this.timeoutMs);
    const pool = this.dumpConns();
    const i = this.nextDump++ % pool.length;
    const conn = pool[i] ?? this.conn;
    const job = (this.dumpQueues[i] ?? Promise.resolve()).then(() => conn.request(this.familyId, cmd, IPVS_GENL_VERSION, payload, true, this.timeoutMs));
    this.dumpQueues[i] = job.catch(() => undefined);
    return job;
  }

  async dumpMany(cmd: number, payloads: readonly Buffer[]): Promise<(Buffer[] | NetlinkErrno)[]> {
    const out = new Array<Buffer[] | NetlinkErrno>(payloads.length);
    const pool = this.dumpConns();
    const n = pool.length;
    await Promise.all(
      pool.map((conn, i) => {
        // Every n-th dump on socket i, queued behind whatever dump that socket runs now.
        const which: number[] = [];
        for (let k = i; k < payloads.length; k += n) which.push(k);
        const job = (this.dumpQueues[i] ?? Promise.resolve()).then(() => conn.dumpSeries(this.familyId, cmd, IPVS_GENL_VERSION, payloads, which, out, this.timeoutMs));
        this.dumpQueues[i] = job.catch(() => undefined);
        return job;
      }),
    );
    return out;
  }

  async requestMany(reqs: readonly IpvsRequest[]): Promise<(Buffer[] | NetlinkErrno)[]> {
    const out = new Array<Buffer[] | NetlinkErrno>(reqs.length);
    const chunks: number[][] = [];
    for (let i = 0; i < reqs.length; i += this.perDatagram) chunks.push(Array.from({ length: Math.min(this.perDatagram, reqs.length - i) }, (_, k) => i + k));
    let next = 0;
    // Datagrams go out in order: the kernel applies one socket's messages in the order it receives them.
    const worker = async (): Promise<void> => {
      while (next < chunks.length) {
        const idx = chunks[next++] ?? [];
        const frames = idx.map((i, k) => {
          const r = reqs[i];
          if (r === undefined) throw new Error('requestMany: hole in the request list');
          const seq = this.conn.nextSeq();
          const flags = NLM_F_REQUEST | (k === idx.length - 1 ? NLM_F_ACK : 0);
          return { seq, buf: message(this.familyId, flags, seq, this.conn.port, r.cmd, IPVS_GENL_VERSION, r.payload) };
        });
        const settled = await Promise.allSettled(this.conn.sendFramed(frames, this.timeoutMs, true));
        settled.forEach((s, k) => {
          const i = idx[k] ?? -1;
          if (s.status === 'fulfilled') out[i] = s.value;
          else if (s.reason instanceof NetlinkErrno) out[i] = s.reason;
          else throw s.reason;
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.inFlight, chunks.length) }, worker));
    return out;
  }

  close(): void {
    this.closed = true;
    this.conn.close();
    for (const d of this.dumpPool ?? []) d.close();
  }
}

async function resolveFamily(conn: Conn, timeoutMs: number): Promise<number> {
  // keepalived's lesson: right after the module loads, the first lookup can fail; try a few times.
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const replies = await conn.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, str(CTRL_ATTR_FAMILY_NAME, IPVS_GENL_NAME), false, timeoutMs);
      for (const r of replies) {
        const id = Attrs.parse(r, 'genl family').u16(CTRL_ATTR_FAMILY_ID, 'genl family');
        if (id !== undefined) return id;
      }
      last = 'no family id in the reply';
    } catch (e) {
      if (e instanceof NetlinkErrno && e.errno === ENOENT) {
        throw new IpvsUnavailable('the kernel has no generic netlink family "IPVS" (CONFIG_IP_VS unset or ip_vs not loadable)');
      }
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
  }
  throw new IpvsUnavailable(`generic netlink family lookup failed: ${last}`);
}
