// The graphs' history on disk, so a restart keeps the last hours (issue #18): a small binary file —
// "LVSDHIST", a version, a JSON header (sample times, series keys, marks), then each series' values as
// float32 (NaN: no value). Pure: bytes in, a dump or an error naming the file and the byte out. JSON for
// the values would be ~7× larger at the ring's limit (4,000 series × 1,080 samples).
import { endianness } from 'node:os';
import type { HistoryDump } from './history-ring.js';

const MAGIC = Buffer.from('LVSDHIST', 'latin1');
const VERSION = 1;
/** The file is little-endian; so are the hosts lvsd runs on, where a series is copied as it is. */
const LITTLE_ENDIAN = endianness() === 'LE';

export function encodeHistory(d: HistoryDump): Buffer {
  const header = Buffer.from(JSON.stringify({ t: d.t, keys: d.series.map(([k]) => k), marks: d.marks }), 'utf8');
  const n = d.t.length;
  const out = Buffer.alloc(MAGIC.length + 8 + header.length + 4 * n * d.series.length);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(VERSION, 8);
  out.writeUInt32LE(header.length, 12);
  header.copy(out, 16);
  let at = 16 + header.length;
  for (const [, values] of d.series) {
    // On a little-endian host one copy of the series' bytes (4,000 series × 1,080 values would be 4.3M calls).
    if (LITTLE_ENDIAN) Buffer.from(values.buffer, values.byteOffset, 4 * n).copy(out, at);
    else for (let i = 0; i < n; i++) out.writeFloatLE(values[i] ?? Number.NaN, at + 4 * i);
    at += 4 * n;
  }
  return out;
}

export function decodeHistory(b: Buffer, file: string): HistoryDump {
  const bad = (at: number, why: string): Error => new Error(`${file}: byte ${at}: ${why}; the graphs start empty`);
  if (b.length < 16 || !b.subarray(0, 8).equals(MAGIC)) throw bad(0, 'not an lvsd history file');
  const version = b.readUInt32LE(8);
  if (version !== VERSION) throw bad(8, `version ${version}, this lvsd reads ${VERSION}`);
  const len = b.readUInt32LE(12);
  if (16 + len > b.length) throw bad(12, `a header of ${len} bytes in a file of ${b.length}`);
  let header: unknown;
  try {
    header = JSON.parse(b.toString('utf8', 16, 16 + len));
  } catch (e) {
    throw bad(16, `header: ${(e as Error).message}`);
  }
  const h = header as { t?: unknown; keys?: unknown; marks?: unknown };
  if (!Array.isArray(h.t) || !h.t.every((x) => typeof x === 'number' && Number.isFinite(x))) throw bad(16, 'header: t is not a list of times');
  if (!Array.isArray(h.keys) || !h.keys.every((x) => typeof x === 'string')) throw bad(16, 'header: keys is not a list of names');
  if (!Array.isArray(h.marks) || !h.marks.every(isMark)) throw bad(16, 'header: marks are not marks');
  const t = h.t as number[];
  const keys = h.keys;
  const want = 16 + len + 4 * t.length * keys.length;
  if (b.length !== want) throw bad(16 + len, `${b.length - 16 - len} bytes of values, ${want - 16 - len} expected for ${keys.length} series × ${t.length} samples`);
  let at = 16 + len;
  const series: [string, Float32Array][] = keys.map((k) => {
    const values = new Float32Array(t.length);
    if (LITTLE_ENDIAN) new Uint8Array(values.buffer).set(b.subarray(at, at + 4 * t.length));
    else for (let i = 0; i < t.length; i++) values[i] = b.readFloatLE(at + 4 * i);
    at += 4 * t.length;
    return [k, values];
  });
  return { t, series, marks: h.marks as HistoryDump['marks'] };
}

function isMark(m: unknown): boolean {
  if (typeof m !== 'object' || m === null) return false;
  const x = m as Record<string, unknown>;
  return typeof x.at === 'number' && (x.kind === 'vrrp' || x.kind === 'health') && typeof x.text === 'string';
}
