// The IPVS client: typed commands over an IpvsTransport. Every failure is an IpvsError naming the
// command and the object; batches are pipelined (many requests in flight) so a full table programs fast.
import {
  decodeDaemon, decodeDest, decodeInfo, decodeService, decodeTimeouts, daemonPayload, daemonStopPayload, destPayload,
  destText, replyNest, serviceKeyPayload, serviceKeyPayloadOf, serviceKeyText, servicePayload, encodeTimeouts,
  type IpvsDaemon, type IpvsDest, type IpvsInfo, type IpvsService, type IpvsTimeouts, type ServiceKey, type SyncRole,
} from './codec.js';
import { CMD_NAMES, Cmd, CmdAttr } from './constants.js';
import { IpvsError } from './errors.js';
import { ipvsNative } from './native.js';
import { NetlinkErrno, NetlinkTransport, type IpvsTransport, type NetlinkTransportOptions } from './transport.js';

/** One change, as data: what batch() sends. */
export type IpvsOp =
  | { op: 'add-service'; service: IpvsService }
  | { op: 'update-service'; service: IpvsService }
  | { op: 'delete-service'; key: ServiceKey }
  | { op: 'add-dest'; service: ServiceKey; dest: IpvsDest }
  | { op: 'update-dest'; service: ServiceKey; dest: IpvsDest }
  | { op: 'delete-dest'; service: ServiceKey; dest: IpvsDest };

export interface BatchResult {
  op: IpvsOp;
  error?: IpvsError;
}

export interface IpvsServiceWithDests extends IpvsService {
  dests: IpvsDest[];
}

/** One service of dumpTable(), as the kernel sent it. */
export interface RawServiceDump {
  /** Its SERVICE nest (the attributes inside). */
  service: Buffer;
  /** Its GET_DEST reply payloads, one per destination (each holds a DEST nest: codec.ts's replyNest finds it). */
  dests: Buffer[];
}

const ESRCH = 3;

export function opText(o: IpvsOp): string {
  switch (o.op) {
    case 'add-service':
    case 'update-service':
      return serviceKeyText(o.service.key);
    case 'delete-service':
      return serviceKeyText(o.key);
    default:
      return `${serviceKeyText(o.service)} → ${destText(o.dest)}`;
  }
}

function encodeOp(o: IpvsOp): [number, Buffer] {
  switch (o.op) {
    case 'add-service':
      return [Cmd.NEW_SERVICE, servicePayload(o.service)];
    case 'update-service':
      return [Cmd.SET_SERVICE, servicePayload(o.service)];
    case 'delete-service':
      return [Cmd.DEL_SERVICE, serviceKeyPayload(o.key)];
    case 'add-dest':
      return [Cmd.NEW_DEST, destPayload(o.service, o.dest)];
    case 'update-dest':
      return [Cmd.SET_DEST, destPayload(o.service, o.dest)];
    case 'delete-dest':
      return [Cmd.DEL_DEST, destPayload(o.service, o.dest, false)];
  }
}

export interface IpvsClientOptions extends NetlinkTransportOptions {
  /** Services whose destinations listTable() reads at once (default 64). */
  window?: number;
}

export class IpvsClient {
  private readonly window: number;

  constructor(
    private readonly transport: IpvsTransport,
    opts: IpvsClientOptions = {},
  ) {
    this.window = opts.window ?? 64;
  }

  /** Opens a generic-netlink socket and resolves family "IPVS"; throws IpvsUnavailable if the kernel has none. */
  static async open(opts: IpvsClientOptions = {}): Promise<IpvsClient> {
    return new IpvsClient(await NetlinkTransport.open(opts), opts);
  }

  close(): void {
    this.transport.close();
  }

  private async call(cmd: number, payload: Buffer, object: string, dump = false): Promise<Buffer[]> {
    try {
      return await this.transport.request(cmd, payload, dump);
    } catch (e) {
      if (e instanceof NetlinkErrno) throw IpvsError.fromErrno(e.errno, CMD_NAMES[cmd] ?? String(cmd), object);
      throw e;
    }
  }

  // ---- services ----

  /** `stats: false` leaves the counters out (see decodeService). */
  async listServices(stats = true): Promise<IpvsService[]> {
    const replies = await this.call(Cmd.GET_SERVICE, Buffer.alloc(0), 'all services', true);
    return replies.map((p) => decodeService(replyNest(p, CmdAttr.SERVICE, 'GET_SERVICE'), stats));
  }

  /** One service, or undefined if the kernel has none with that key. */
  async getService(key: ServiceKey): Promise<IpvsService | undefined> {
    try {
      const [p] = await this.call(Cmd.GET_SERVICE, serviceKeyPayload(key), serviceKeyText(key));
      return p === undefined ? undefined : decodeService(replyNest(p, CmdAttr.SERVICE, 'GET_SERVICE'));
    } catch (e) {
      if (e instanceof IpvsError && e.code === 'ESRCH') return undefined;
      throw e;
    }
  }

  async addService(s: IpvsService): Promise<void> {
    await this.call(Cmd.NEW_SERVICE, servicePayload(s), serviceKeyText(s.key));
  }
  async updateService(s: IpvsService): Promise<void> {
    await this.call(Cmd.SET_SERVICE, servicePayload(s), serviceKeyText(s.key));
  }
  async deleteService(key: ServiceKey): Promise<void> {
    await this.call(Cmd.DEL_SERVICE, serviceKeyPayload(key), serviceKeyText(key));
  }

  // ---- destinations ----

  async listDests(key: ServiceKey, stats = true): Promise<IpvsDest[]> {
    const replies = await this.call(Cmd.GET_DEST, serviceKeyPayload(key), serviceKeyText(key), true);
    return replies.map((p) => decodeDest(replyNest(p, CmdAttr.DEST, 'GET_DEST'), key.family, stats));
  }
  async addDest(key: ServiceKey, d: IpvsDest): Promise<void> {
    await this.call(Cmd.NEW_DEST, destPayload(key, d), `${serviceKeyText(key)} → ${destText(d)}`);
  }
  async updateDest(key: ServiceKey, d: IpvsDest): Promise<void> {
    await this.call(Cmd.SET_DEST, destPayload(key, d), `${serviceKeyText(key)} → ${destText(d)}`);
  }
  async deleteDest(key: ServiceKey, d: IpvsDest): Promise<void> {
    await this.call(Cmd.DEL_DEST, destPayload(key, d, false), `${serviceKeyText(key)} → ${destText(d)}`);
  }

  /**
   * Every service with its destinations (one dump, then one dest dump per service, pipelined: the kernel
   * has no dump of every destination at once). `stats: false` leaves the counters out.
   */
  async listTable(stats = true): Promise<IpvsServiceWithDests[]> {
    return (await this.dumpTable()).map(({ service, dests }) => {
      const s = decodeService(service, stats);
      return { ...s, dests: dests.map((d) => decodeDest(replyNest(d, CmdAttr.DEST, 'GET_DEST'), s.key.family, stats)) };
    });
  }

  /**
   * The table as the kernel's replies hold it, undecoded: each service's SERVICE nest and its GET_DEST replies,
   * for a reader that decodes straight into its own form. The destination
   * dumps run back to back on each dump socket (the transport's dumpMany).
   */
  async dumpTable(): Promise<RawServiceDump[]> {
    const replies = await this.call(Cmd.GET_SERVICE, Buffer.alloc(0), 'all services', true);
    const out: RawServiceDump[] = replies.map((p) => ({ service: replyNest(p, CmdAttr.SERVICE, 'GET_SERVICE'), dests: [] }));
    const payloads = out.map((e) => serviceKeyPayloadOf(e.service));
    const results = this.transport.dumpMany !== undefined ? await this.transport.dumpMany(Cmd.GET_DEST, payloads) : await this.dumpEach(payloads);
    results.forEach((r, k) => {
      const entry = out[k];
      if (entry === undefined) return;
      // Deleted between the two dumps: report it empty rather than fail the whole read.
      if (r instanceof NetlinkErrno && r.errno === ESRCH) return;
      if (r instanceof NetlinkErrno) throw IpvsError.fromErrno(r.errno, 'GET_DEST', serviceKeyText(decodeService(entry.service, false).key));
      entry.dests = r;
    });
    return out;
  }

  /**
   * The table as one buffer of the kernel's attribute bytes (ipvs/native.ts has the layout), read in C on a worker
   * thread by the lvsd_ipvs addon: what dumpTable() reads, without a JavaScript callback per reply. Undefined when
   * the addon is not loaded, or the transport is not a netlink socket (an in-memory kernel): read by dumpTable().
   */
  async dumpTablePacked(): Promise<Buffer | undefined> {
    const addon = ipvsNative();
    if (addon === null || !(this.transport instanceof NetlinkTransport)) return undefined;
    try {
      return await addon.dumpTable(this.transport.familyId);
    } catch (e) {
      const { errno, command } = e as { errno?: unknown; command?: unknown };
      if (typeof errno !== 'number') throw e;
      throw IpvsError.fromErrno(errno, typeof command === 'string' ? command : 'GET_DEST', 'all services');
    }
  }

  /** dumpMany for a transport without one: `window` dumps at a time, a new one as soon as one ends. */
  private async dumpEach(payloads: readonly Buffer[]): Promise<(Buffer[] | NetlinkErrno)[]> {
    const out = new Array<Buffer[] | NetlinkErrno>(payloads.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < payloads.length) {
        const k = next++;
        try {
          out[k] = await this.transport.request(Cmd.GET_DEST, payloads[k] ?? Buffer.alloc(0), true);
        } catch (e) {
          if (!(e instanceof NetlinkErrno)) throw e;
          out[k] = e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.window, payloads.length) }, worker));
    return out;
  }

  // ---- batches ----

  /**
   * Sends every op in order, many per datagram (the kernel handles one socket's messages in order).
   * Never throws for a kernel error: each result carries its own IpvsError, so one bad object does not
   * hide the others.
   */
  async batch(ops: readonly IpvsOp[]): Promise<BatchResult[]> {
    const replies = await this.transport.requestMany(
      ops.map((op) => {
        const [cmd, payload] = encodeOp(op);
        return { cmd, payload };
      }),
    );
    return ops.map((op, i) => {
      const r = replies[i];
      if (r instanceof NetlinkErrno) {
        const [cmd] = encodeOp(op);
        return { op, error: IpvsError.fromErrno(r.errno, CMD_NAMES[cmd] ?? String(cmd), opText(op)) };
      }
      return { op };
    });
  }

  // ---- timeouts, info, zero, flush ----

  async getTimeouts(): Promise<IpvsTimeouts> {
    const [p] = await this.call(Cmd.GET_CONFIG, Buffer.alloc(0), 'timeouts');
    return decodeTimeouts(p ?? Buffer.alloc(0));
  }
  /** Sets the connection timeouts (seconds); 0 or omitted leaves one unchanged. */
  async setTimeouts(t: Partial<IpvsTimeouts>): Promise<void> {
    await this.call(Cmd.SET_CONFIG, Buffer.concat(encodeTimeouts(t)), 'timeouts');
  }
  async getInfo(): Promise<IpvsInfo> {
    const [p] = await this.call(Cmd.GET_INFO, Buffer.alloc(0), 'info');
    return decodeInfo(p ?? Buffer.alloc(0));
  }
  /** Zeroes the counters of one service, or of all of them. */
  async zero(key?: ServiceKey): Promise<void> {
    await this.call(Cmd.ZERO, key === undefined ? Buffer.alloc(0) : serviceKeyPayload(key), key === undefined ? 'all services' : serviceKeyText(key));
  }
  /** Deletes every service. lvsd never calls this on its own (reconcile, never flush); it is for operators and tests. */
  async flush(): Promise<void> {
    await this.call(Cmd.FLUSH, Buffer.alloc(0), 'all services');
  }

  // ---- connection sync daemon ----

  async listDaemons(): Promise<IpvsDaemon[]> {
    const replies = await this.call(Cmd.GET_DAEMON, Buffer.alloc(0), 'sync daemons', true);
    return replies.map((p) => decodeDaemon(replyNest(p, CmdAttr.DAEMON, 'GET_DAEMON')));
  }
  async startDaemon(d: IpvsDaemon): Promise<void> {
    await this.call(Cmd.NEW_DAEMON, daemonPayload(d), `sync ${d.role} on ${d.ifname} id ${d.syncId}`);
  }
  async stopDaemon(role: SyncRole): Promise<void> {
    await this.call(Cmd.DEL_DAEMON, daemonStopPayload(role), `sync ${role}`);
  }
}

/** Whether this kernel has IPVS: opens and closes a socket. Never throws. */
export async function probeIpvs(): Promise<{ available: true; version: string } | { available: false; reason: string }> {
  try {
    const c = await IpvsClient.open({ timeoutMs: 2000 });
    try {
      const info = await c.getInfo();
      return { available: true, version: info.version };
    } finally {
      c.close();
    }
  } catch (e) {
    return { available: false, reason: (e as Error).message };
  }
}
