// The kernel's process events connector (NETLINK_CONNECTOR, CN_IDX_PROC: linux/connector.h, cn_proc.h),
// what keepalived's track_process listens to instead of polling /proc. Pure byte work: the socket is
// proc-events.ts's. Layout: nlmsghdr (16) | cn_msg {idx, val, seq, ack: u32; len, flags: u16} (20) | payload.
export const NETLINK_CONNECTOR = 11;
export const CN_IDX_PROC = 1;
export const CN_VAL_PROC = 1;

const NLMSG_HDRLEN = 16;
const CN_MSG_LEN = 20;
const NLMSG_DONE = 3;
const PROC_CN_MCAST_LISTEN = 1;
const PROC_CN_MCAST_IGNORE = 2;

/** proc_event.what values lvsd reads (cn_proc.h). */
const WHAT = { NONE: 0, FORK: 0x1, EXEC: 0x2, COMM: 0x200, EXIT: 0x80000000 } as const;

export type ProcEvent =
  | { type: 'fork'; parentTgid: number; childPid: number; childTgid: number }
  | { type: 'exec'; pid: number; tgid: number }
  | { type: 'comm'; pid: number; tgid: number; comm: string }
  | { type: 'exit'; pid: number; tgid: number }
  /** The kernel's answer to a listen/ignore request: errno 0 = subscribed. */
  | { type: 'ack'; errno: number };

/** The subscribe (listen = true) or unsubscribe request, one netlink message. */
export function encodeListen(listen: boolean, portId: number, seq = 0): Buffer {
  const b = Buffer.alloc(NLMSG_HDRLEN + CN_MSG_LEN + 4);
  b.writeUInt32LE(b.length, 0);
  b.writeUInt16LE(NLMSG_DONE, 4);
  b.writeUInt16LE(0, 6);
  b.writeUInt32LE(seq, 8);
  b.writeUInt32LE(portId, 12);
  b.writeUInt32LE(CN_IDX_PROC, 16);
  b.writeUInt32LE(CN_VAL_PROC, 20);
  b.writeUInt32LE(seq, 24);
  b.writeUInt32LE(0, 28);
  b.writeUInt16LE(4, 32);
  b.writeUInt16LE(0, 34);
  b.writeUInt32LE(listen ? PROC_CN_MCAST_LISTEN : PROC_CN_MCAST_IGNORE, 36);
  return b;
}

/**
 * The process events in one datagram (several netlink messages may share it). Events lvsd has no use for
 * (uid, sid, ptrace, coredump, …) and messages of other connectors are skipped; a short one throws.
 */
export function decodeProcEvents(buf: Buffer): ProcEvent[] {
  const out: ProcEvent[] = [];
  let off = 0;
  while (off + NLMSG_HDRLEN <= buf.length) {
    const len = buf.readUInt32LE(off);
    if (len < NLMSG_HDRLEN || off + len > buf.length) throw new Error(`proc connector: message at ${off} of length ${len}, ${buf.length - off} bytes left`);
    const msg = buf.subarray(off + NLMSG_HDRLEN, off + len);
    off += (len + 3) & ~3;
    if (msg.length < CN_MSG_LEN || msg.readUInt32LE(0) !== CN_IDX_PROC || msg.readUInt32LE(4) !== CN_VAL_PROC) continue;
    const ev = msg.subarray(CN_MSG_LEN, CN_MSG_LEN + msg.readUInt16LE(16));
    // proc_event: what u32, cpu u32, timestamp_ns u64, then the event's union.
    if (ev.length < 16) throw new Error(`proc connector: event of ${ev.length} bytes`);
    const what = ev.readUInt32LE(0);
    const d = ev.subarray(16);
    const need = (n: number): void => {
      if (d.length < n) throw new Error(`proc connector: event 0x${what.toString(16)} has ${d.length} bytes of data, expected ${n}`);
    };
    switch (what) {
      case WHAT.NONE:
        need(4);
        out.push({ type: 'ack', errno: d.readUInt32LE(0) });
        break;
      case WHAT.FORK:
        need(16);
        out.push({ type: 'fork', parentTgid: d.readUInt32LE(4), childPid: d.readUInt32LE(8), childTgid: d.readUInt32LE(12) });
        break;
      case WHAT.EXEC:
        need(8);
        out.push({ type: 'exec', pid: d.readUInt32LE(0), tgid: d.readUInt32LE(4) });
        break;
      case WHAT.COMM: {
        need(24);
        const raw = d.subarray(8, 24);
        const nul = raw.indexOf(0);
        out.push({ type: 'comm', pid: d.readUInt32LE(0), tgid: d.readUInt32LE(4), comm: raw.subarray(0, nul < 0 ? raw.length : nul).toString('utf8') });
        break;
      }
      case WHAT.EXIT:
        need(8);
        out.push({ type: 'exit', pid: d.readUInt32LE(0), tgid: d.readUInt32LE(4) });
        break;
      default:
        break;
    }
  }
  return out;
}
