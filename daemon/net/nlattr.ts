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

/** A parsed attribute set: type → value (the last one wins, as in the kernel's nla_parse). */
export class Attrs {
  private constructor(private readonly map: Map<number, Buffer>) {}

  /** Parses a run of attributes; throws a clear error on truncation (what, offset, lengths). */
  static parse(buf: Buffer, what: string): Attrs {
    const map = new Map<number, Buffer>();
    let off = 0;
    while (off + 4 <= buf.length) {
      const len = buf.readUInt16LE(off);
      const type = buf.readUInt16LE(off + 2) & NLA_TYPE_MASK;
      if (len < 4 || off + len > buf.length) {
        throw new Error(`${what}: attribute ${type} at offset ${off} has length ${len}, only ${buf.length - off} bytes left`);
      }
      map.set(type, buf.subarray(off + 4, off + len));
      off += align4(len);
    }
    return new Attrs(map);
  }

  has(type: number): boolean {
    return this.map.has(type);
  }
  raw(type: number): Buffer | undefined {
    return this.map.get(type);
  }
  private sized(type: number, n: number, what: string): Buffer | undefined {
    const v = this.map.get(type);
    if (v !== undefined && v.length < n) throw new Error(`${what}: attribute ${type} is ${v.length} bytes, expected ${n}`);
    return v;
  }
  u8(type: number, what: string): number | undefined {
    return this.sized(type, 1, what)?.readUInt8(0);
  }
  u16(type: number, what: string): number | undefined {
    return this.sized(type, 2, what)?.readUInt16LE(0);
  }
  be16(type: number, what: string): number | undefined {
    return this.sized(type, 2, what)?.readUInt16BE(0);
  }
  u32(type: number, what: string): number | undefined {
    return this.sized(type, 4, what)?.readUInt32LE(0);
  }
  u64(type: number, what: string): number | undefined {
    const v = this.sized(type, 8, what);
    return v === undefined ? undefined : Number(v.readBigUInt64LE(0));
  }
  str(type: number): string | undefined {
    const v = this.map.get(type);
    if (v === undefined) return undefined;
    const nul = v.indexOf(0);
    return v.subarray(0, nul < 0 ? v.length : nul).toString('utf8');
  }
  nested(type: number, what: string): Attrs | undefined {
    const v = this.map.get(type);
    return v === undefined ? undefined : Attrs.parse(v, what);
  }
}
