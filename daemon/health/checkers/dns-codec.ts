// A tiny DNS message codec (RFC 1035 §4, AAAA from RFC 3596): enough to ask one question and read the
// answers of a reply. Pure; bad input throws DnsCodecError naming the byte offset.

export const QTYPES: Readonly<Record<string, number>> = {
  A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, ANY: 255,
};
const TYPE_NAMES = new Map(Object.entries(QTYPES).map(([k, v]) => [v, k]));

export const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'] as const;

export function rcodeName(rcode: number): string {
  return RCODE_NAMES[rcode] ?? `RCODE${rcode}`;
}

export function typeName(t: number): string {
  return TYPE_NAMES.get(t) ?? `TYPE${t}`;
}

export class DnsCodecError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(`DNS message at byte ${offset}: ${message}`);
    this.name = 'DnsCodecError';
  }
}

export interface DnsRecord {
  name: string;
  type: number;
  ttl: number;
  /** Presentation form: "192.0.2.1", "2001:db8::1", "mail.example.com", "10 mx.example.com", TXT as its strings joined. */
  data: string;
}

export interface DnsResponse {
  id: number;
  qr: boolean;
  opcode: number;
  tc: boolean;
  rcode: number;
  questions: { name: string; type: number }[];
  answers: DnsRecord[];
}

/** Encodes a query with one question (class IN, recursion desired). */
export function encodeQuery(id: number, name: string, qtype: number): Buffer {
  const labels = name === '.' || name === '' ? [] : name.replace(/\.$/, '').split('.');
  let qnameLen = 1;
  for (const l of labels) {
    const n = Buffer.byteLength(l, 'latin1');
    if (n === 0 || n > 63) throw new Error(`DNS name ${JSON.stringify(name)}: label ${JSON.stringify(l)} must be 1..63 bytes`);
    qnameLen += n + 1;
  }
  if (qnameLen > 255) throw new Error(`DNS name ${JSON.stringify(name)} is longer than 255 bytes`);
  const buf = Buffer.alloc(12 + qnameLen + 4);
  buf.writeUInt16BE(id & 0xffff, 0);
  buf.writeUInt16BE(0x0100, 2); // RD
  buf.writeUInt16BE(1, 4); // QDCOUNT
  let o = 12;
  for (const l of labels) {
    o = buf.writeUInt8(Buffer.byteLength(l, 'latin1'), o);
    o += buf.write(l, o, 'latin1');
  }
  o = buf.writeUInt8(0, o);
  o = buf.writeUInt16BE(qtype, o);
  buf.writeUInt16BE(1, o); // IN
  return buf;
}

function need(buf: Buffer, o: number, n: number, what: string): void {
  if (o + n > buf.length) throw new DnsCodecError(o, `truncated ${what} (need ${n} bytes, ${buf.length - o} left)`);
}

/** Reads a possibly compressed name; returns it and the offset after it in the original stream. */
export function readName(buf: Buffer, start: number): [string, number] {
  const labels: string[] = [];
  let o = start;
  let after = -1;
  let jumps = 0;
  let total = 0;
  for (;;) {
    need(buf, o, 1, 'name');
    const len = buf[o] ?? 0;
    if ((len & 0xc0) === 0xc0) {
      need(buf, o, 2, 'name pointer');
      if (++jumps > 32) throw new DnsCodecError(o, 'name compression loop');
      if (after < 0) after = o + 2;
      o = buf.readUInt16BE(o) & 0x3fff;
      continue;
    }
    if ((len & 0xc0) !== 0) throw new DnsCodecError(o, `bad label type 0x${len.toString(16)}`);
    if (len === 0) {
      o += 1;
      break;
    }
    need(buf, o + 1, len, 'label');
    total += len + 1;
    if (total > 255) throw new DnsCodecError(o, 'name longer than 255 bytes');
    labels.push(buf.toString('latin1', o + 1, o + 1 + len));
    o += 1 + len;
  }
  return [labels.length === 0 ? '.' : labels.join('.'), after >= 0 ? after : o];
}

function ipv6(b: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  // Compress the longest run of zero groups (RFC 5952).
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

function rdata(buf: Buffer, type: number, o: number, len: number): string {
  const rd = buf.subarray(o, o + len);
  switch (type) {
    case 1:
      if (len !== 4) throw new DnsCodecError(o, `A record of ${len} bytes`);
      return `${rd[0]}.${rd[1]}.${rd[2]}.${rd[3]}`;
    case 28:
      if (len !== 16) throw new DnsCodecError(o, `AAAA record of ${len} bytes`);
      return ipv6(rd);
    case 2:
    case 5:
    case 12:
      return readName(buf, o)[0];
    case 15:
      need(buf, o, 2, 'MX preference');
      return `${buf.readUInt16BE(o)} ${readName(buf, o + 2)[0]}`;
    case 16: {
      const parts: string[] = [];
      for (let p = 0; p < len; ) {
        const n = rd[p] ?? 0;
        if (p + 1 + n > len) throw new DnsCodecError(o + p, 'TXT string overruns its record');
        parts.push(rd.toString('latin1', p + 1, p + 1 + n));
        p += 1 + n;
      }
      return parts.join('');
    }
    default:
      return rd.toString('hex');
  }
}

export function decodeResponse(buf: Buffer): DnsResponse {
  need(buf, 0, 12, 'header');
  const flags = buf.readUInt16BE(2);
  const qd = buf.readUInt16BE(4);
  const an = buf.readUInt16BE(6);
  let o = 12;
  const questions: { name: string; type: number }[] = [];
  for (let i = 0; i < qd; i++) {
    const [name, next] = readName(buf, o);
    need(buf, next, 4, 'question');
    questions.push({ name, type: buf.readUInt16BE(next) });
    o = next + 4;
  }
  const answers: DnsRecord[] = [];
  for (let i = 0; i < an; i++) {
    const [name, next] = readName(buf, o);
    need(buf, next, 10, 'record header');
    const type = buf.readUInt16BE(next);
    const ttl = buf.readUInt32BE(next + 4);
    const len = buf.readUInt16BE(next + 8);
    need(buf, next + 10, len, 'record data');
    answers.push({ name, type, ttl, data: rdata(buf, type, next + 10, len) });
    o = next + 10 + len;
  }
  return {
    id: buf.readUInt16BE(0),
    qr: (flags & 0x8000) !== 0,
    opcode: (flags >> 11) & 0xf,
    tc: (flags & 0x0200) !== 0,
    rcode: flags & 0xf,
    questions,
    answers,
  };
}
