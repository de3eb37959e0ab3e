// The one seam between the IPVS client and the kernel: send a command, get the reply payloads.
// The real one speaks generic netlink through the npm `netlink` package; tests can inject another.
import { createNetlink, FlagsGet, MessageType, Protocol, type NetlinkSocket } from 'netlink';
import { IPVS_GENL_NAME, IPVS_GENL_VERSION } from './constants.js';
import { IpvsUnavailable } from './errors.js';
import { Attrs, str } from './nlattr.js';

/** A kernel error reply: the negative errno of NLMSG_ERROR. */
export class NetlinkErrno extends Error {
  constructor(readonly errno: number) {
    super(`netlink error ${errno}`);
  }
}

export interface IpvsTransport {
  /**
   * Sends one IPVS command and resolves with the attribute payload (after the genl header) of each reply
   * message: none for an acked change, one for a GET, many for a dump. Rejects with NetlinkErrno.
   */
  request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]>;
  close(): void;
}

const GENL_ID_CTRL = 16;
const CTRL_CMD_GETFAMILY = 3;
const CTRL_ATTR_FAMILY_ID = 1;
const CTRL_ATTR_FAMILY_NAME = 2;
const ENOENT = 2;

function genlHeader(cmd: number, version: number): Buffer {
  return Buffer.from([cmd, version, 0, 0]);
}

export interface NetlinkTransportOptions {
  /** Per-request timeout (default 5 s): a lost reply must not hang the daemon. */
  timeoutMs?: number;
  /** Sockets used for dumps in parallel (default 4). */
  dumpSockets?: number;
}

/**
 * Generic netlink sockets bound to family "IPVS": one for changes (pipelined: many requests in flight),
 * and a few for dumps. A netlink socket runs one dump at a time and the npm package can only reassemble
 * one multipart reply at a time, so each dump socket is used by one dump at a time (a small pool lets
 * listTable read several services' destinations in parallel).
 */
export class NetlinkTransport implements IpvsTransport {
  private readonly dumpQueues: Promise<unknown>[];
  private nextDump = 0;

  private constructor(
    private readonly sock: NetlinkSocket,
    private readonly dumpSocks: NetlinkSocket[],
    readonly familyId: number,
    private readonly timeoutMs: number,
  ) {
    this.dumpQueues = dumpSocks.map(() => Promise.resolve());
  }

  static async open(opts: NetlinkTransportOptions = {}): Promise<NetlinkTransport> {
    let sock: NetlinkSocket;
    try {
      // Large buffers: pipelined batches of thousands of changes come back as thousands of acks.
      sock = createNetlink(Protocol.GENERIC, { recvBufferSize: 8 << 20, sendBufferSize: 8 << 20 });
    } catch (e) {
      throw new IpvsUnavailable(`cannot open a generic netlink socket: ${(e as Error).message}`);
    }
    const timeoutMs = opts.timeoutMs ?? 5000;
    const dumpSocks: NetlinkSocket[] = [];
    try {
      const familyId = await resolveFamily(sock, timeoutMs);
      for (let i = 0; i < (opts.dumpSockets ?? 4); i++) dumpSocks.push(createNetlink(Protocol.GENERIC, { recvBufferSize: 4 << 20, sendBufferSize: 1 << 20 }));
      return new NetlinkTransport(sock, dumpSocks, familyId, timeoutMs);
    } catch (e) {
      sock.close();
      for (const d of dumpSocks) d.close();
      throw e;
    }
  }

  request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]> {
    if (!dump) return this.send(this.sock, cmd, payload, false);
    const i = this.nextDump++ % this.dumpSocks.length;
    const sock = this.dumpSocks[i] ?? this.sock;
    const job = (this.dumpQueues[i] ?? Promise.resolve()).then(() => this.send(sock, cmd, payload, true));
    this.dumpQueues[i] = job.catch(() => undefined);
    return job;
  }

  private async send(sock: NetlinkSocket, cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]> {
    const [msgs] = await sock.request(this.familyId, [genlHeader(cmd, IPVS_GENL_VERSION), payload], {
      flags: dump ? FlagsGet.DUMP : 0,
      checkError: false,
      timeout: this.timeoutMs,
    });
    const out: Buffer[] = [];
    for (const m of msgs) {
      if (m.type === (MessageType.ERROR as number)) {
        const errno = m.data.readInt32LE(0);
        if (errno !== 0) throw new NetlinkErrno(-errno);
        continue;
      }
      if (m.type === (MessageType.DONE as number)) continue;
      out.push(m.data.subarray(4));
    }
    return out;
  }

  close(): void {
    this.sock.close();
    for (const d of this.dumpSocks) d.close();
  }
}

async function resolveFamily(sock: NetlinkSocket, timeoutMs: number): Promise<number> {
  // keepalived's lesson: right after the module loads, the first lookup can fail; try a few times.
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const [msgs] = await sock.request(GENL_ID_CTRL, [genlHeader(CTRL_CMD_GETFAMILY, 1), str(CTRL_ATTR_FAMILY_NAME, IPVS_GENL_NAME)], {
        checkError: false,
        timeout: timeoutMs,
      });
      for (const m of msgs) {
        if (m.type === (MessageType.ERROR as number)) {
          const errno = -m.data.readInt32LE(0);
          if (errno === ENOENT) throw new IpvsUnavailable('the kernel has no generic netlink family "IPVS" (CONFIG_IP_VS unset or ip_vs not loadable)');
          if (errno !== 0) throw new Error(`family lookup failed: errno ${errno}`);
          continue;
        }
        const id = Attrs.parse(m.data.subarray(4), 'genl family').u16(CTRL_ATTR_FAMILY_ID, 'genl family');
        if (id !== undefined) return id;
      }
      last = 'no family id in the reply';
    } catch (e) {
      if (e instanceof IpvsUnavailable) throw e;
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
  }
  throw new IpvsUnavailable(`generic netlink family lookup failed: ${last}`);
}
