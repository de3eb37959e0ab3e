// Netlink attribute (TLV) framing: {u16 len, u16 type, value, pad to 4}. Pure byte work, no sockets.
/** The nested flag of an attribute's type, and the mask that strips the flags (linux/netlink.h). */
export const NLA_F_NESTED = 0x8000;
export const NLA_TYPE_MASK = 0x3fff;

const align4 = (n: number): number => (n + 3) & ~3;

/** One attribute on the wire. */
export function attr(type: number, value: Uint8Array, nested = false): Buffer {
  const len = 4 + value.length;
  const out = Buffer.alloc(align4(len));
  out.writeUInt16LE(len, 0);
  out.writeUInt16LE(nested ? type | NLA_F_NESTED : type, 2);
  out.set(value, 4);
  return out;
}

export const nest = (type: number, children: Buffer[]): Buffer => attr(type, Buffer.concat(children), true);

export function u8(type: number, v: number): Buffer {
  return attr(type, Buffer.from([v & 0xff]));
}
export function u16(type: number, v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return attr(type, b);
}
export function be16(type: number, v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v);
  return attr(type, b);
}
export function u32(type: number, v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return attr(type, b);
}
export function u64(type: number, v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return attr(type, b);
}
/** NUL-terminated string. */
export function str(type: number, v: string): Buffer {
  return attr(type, Buffer.concat([Buffer.from(v, 'utf8'), Buffer.from([0])]));
}

/**
 * A parsed attribute set: type → value (the last one wins, as in the kernel's nla_parse). It keeps offsets
 * into the buffer it was given, not a Buffer per attribute: decoding a dump of a large IPVS table is
 * mostly this class, and a subarray per attribute was most of that (and of its garbage).
 */
export class Attrs {
  private constructor(
    private readonly buf: Buffer,
    /** type → offset of the attribute × 65536 + its length (header included); holes for absent types. */
    private readonly pos: number[],
  ) {}

  /** Parses a run of attributes; throws a clear error on truncation (what, offset, lengths). */
  static parse(buf: Buffer, what: string): Attrs {
    return Attrs.parseRange(buf, 0, buf.length, what);
  }

  private static parseRange(buf: Buffer, start: number, end: number, what: string): Attrs {
    const pos: number[] = [];
    let off = start;
    while (off + 4 <= end) {
      const len = buf.readUInt16LE(off);
      const type = buf.readUInt16LE(off + 2) & NLA_TYPE_MASK;
      if (len < 4 || off + len > end) {
        throw new Error(`${what}: attribute ${type} at offset ${off - start} has length ${len}, only ${end - off} bytes left`);
      }
      pos[type] = off * 65536 + len;
      off += align4(len);
    }
    return new Attrs(buf, pos);
  }

  has(type: number): boolean {
    return this.pos[type] !== undefined;
  }
  raw(type: number): Buffer | undefined {
    const p = this.pos[type];
    if (p === undefined) return undefined;
    const off = Math.floor(p / 65536);
    return this.buf.subarray(off + 4, off + (p % 65536));
  }
  /** The offset of the value of `type` (-1 if absent), checked to hold at least n bytes. */
  private sized(type: number, n: number, what: string): number {
    const p = this.pos[type];
    if (p === undefined) return -1;
    const len = (p % 65536) - 4;
    if (len < n) throw new Error(`${what}: attribute ${type} is ${len} bytes, expected ${n}`);
    return Math.floor(p / 65536) + 4;
  }
  u8(type: number, what: string): number | undefined {
    const o = this.sized(type, 1, what);
    return o < 0 ? undefined : this.buf[o];
  }
  u16(type: number, what: string): number | undefined {
    const o = this.sized(type, 2, what);
    return o < 0 ? undefined : this.buf.readUInt16LE(o);
  }
  be16(type: number, what: string): number | undefined {
    const o = this.sized(type, 2, what);
    return o < 0 ? undefined : this.buf.readUInt16BE(o);
  }
  u32(type: number, what: string): number | undefined {
    const o = this.sized(type, 4, what);
    return o < 0 ? undefined : this.buf.readUInt32LE(o);
  }
  /** As a Number (exact below 2^53, as Number(bigint) was). */
  u64(type: number, what: string): number | undefined {
    const o = this.sized(type, 8, what);
    return o < 0 ? undefined : this.buf.readUInt32LE(o) + this.buf.readUInt32LE(o + 4) * 0x1_0000_0000;
  }
  str(type: number): string | undefined {
    const p = this.pos[type];
    if (p === undefined) return undefined;
    const off = Math.floor(p / 65536) + 4;
    const end = off - 4 + (p % 65536);
    const nul = this.buf.indexOf(0, off);
    return this.buf.toString('utf8', off, nul < 0 || nul > end ? end : nul);
  }
  nested(type: number, what: string): Attrs | undefined {
    const p = this.pos[type];
    if (p === undefined) return undefined;
    const off = Math.floor(p / 65536);
    return Attrs.parseRange(this.buf, off + 4, off + (p % 65536), what);
  }
}
