// Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load Balancer",
// NSDI 2016, section 3.4): a lookup table of M slots (M prime) in which every backend owns about M/N slots,
// and from which a backend's departure moves little more than that backend's own slots.
//
// Pure: the same backend set gives the same table on every director, whatever order the set arrives in
// (backends are sorted by name first), which is the whole point behind ECMP — a flow the routers move to
// another director still reaches the same real server. Every dataplane may use it (nftables map, userspace
// proxy, and as a model of IPVS `mh`).

/** One backend of a table: a stable name (e.g. "10.0.1.1:80") and an optional weight (default 1; 0 = no slots). */
export interface MaglevBackend {
  readonly name: string;
  readonly weight?: number;
}

export interface MaglevTable {
  /** The backends in table order (sorted by name, zero weights left out): slot values index this list. */
  readonly backends: readonly string[];
  /** slots[i] = index into `backends`; -1 only when no backend has a weight (an empty table). */
  readonly slots: Int32Array;
}

/** IPVS mh's own sizes come from the same list (ip_vs_mh.c primes[]): 4,093 is its Kconfig default. */
export const MAGLEV_DEFAULT_SIZE = 65_537;

/**
 * The table size of the `mh` scheduler in the nftables and userspace dataplanes: IPVS mh's own default
 * (ip_vs_mh.c primes[], CONFIG_IP_VS_MH_TAB_INDEX=12), so every dataplane sizes it alike. Maglev keeps real
 * servers within ~1 % of each other while M > 100·N, i.e. up to ~40 real servers. Fixed, not chosen by the
 * server count, so that directors whose health views differ still build tables of one size.
 */
export const MH_TABLE_SIZE = 4093;

/** True for a prime; table sizes are small enough (≤ a few million) for trial division. */
export function isPrime(n: number): boolean {
  if (!Number.isInteger(n) || n < 2) return false;
  if (n % 2 === 0) return n === 2;
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return false;
  return true;
}

/** murmur3's 32-bit finaliser: spreads FNV's weak low bits over the whole word. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over the name's UTF-16 code units from a chosen basis, then mixed: two bases give two independent hashes. */
export function hash32(text: string, basis: number): number {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

const H1_BASIS = 0x811c9dc5; // FNV's offset basis
const H2_BASIS = 0x5bd1e995; // any other odd constant: the paper only asks for two unrelated hashes

/**
 * Builds the table. Each backend's preference list is the paper's permutation
 * `(offset + j·skip) mod M` with offset = h1 mod M and skip = h2 mod (M−1) + 1 (M prime, so every skip
 * visits every slot); backends then take turns claiming their next free preferred slot until all M are
 * taken. A weight w gives w / gcd(weights) claims per turn (as IPVS mh's `turns`), so slots follow weights.
 */
export function maglevTable(backends: readonly MaglevBackend[], size: number = MAGLEV_DEFAULT_SIZE): MaglevTable {
  if (!isPrime(size)) throw new RangeError(`maglev: table size ${String(size)} is not a prime`);
  const live = backends
    .map((b) => ({ name: b.name, weight: b.weight ?? 1 }))
    .filter((b) => {
      if (!Number.isInteger(b.weight) || b.weight < 0) throw new RangeError(`maglev: backend ${b.name}: weight ${String(b.weight)} is not a non-negative integer`);
      return b.weight > 0;
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 1; i < live.length; i++) {
    const prev = live[i - 1];
    const cur = live[i];
    if (prev !== undefined && cur !== undefined && prev.name === cur.name) throw new RangeError(`maglev: backend ${cur.name} is listed twice`);
  }
  const slots = new Int32Array(size).fill(-1);
  const n = live.length;
  if (n === 0) return { backends: [], slots };

  const g = live.reduce((acc, b) => gcd(acc, b.weight), 0);
  const turns = new Int32Array(n);
  const next = new Int32Array(n); // the slot each backend tries next (offset + j·skip, kept incrementally)
  const skip = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const b = live[i] as { name: string; weight: number };
    turns[i] = b.weight / g;
    next[i] = hash32(b.name, H1_BASIS) % size;
    skip[i] = (hash32(b.name, H2_BASIS) % (size - 1)) + 1;
  }
  let filled = 0;
  for (;;) {
    for (let i = 0; i < n; i++) {
      for (let t = turns[i] as number; t > 0; t--) {
        let c = next[i] as number;
        const s = skip[i] as number;
        while ((slots[c] as number) >= 0) {
          c += s;
          if (c >= size) c -= size;
        }
        slots[c] = i;
        c += s;
        next[i] = c >= size ? c - size : c;
        if (++filled === size) return { backends: live.map((b) => b.name), slots };
      }
    }
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** The backend a flow hash lands on, or undefined for an empty table. */
export function maglevLookup(table: MaglevTable, flowHash: number): string | undefined {
  const size = table.slots.length;
  const i = table.slots[(flowHash >>> 0) % size] as number;
  return i < 0 ? undefined : table.backends[i];
}

/** How many slots each backend owns, in `table.backends` order. */
export function slotCounts(table: MaglevTable): number[] {
  const counts = new Array<number>(table.backends.length).fill(0);
  for (const i of table.slots) if (i >= 0) counts[i] = (counts[i] ?? 0) + 1;
  return counts;
}

/** The fraction of slots whose backend differs between two tables of one size (by name, not index). */
export function slotsChanged(before: MaglevTable, after: MaglevTable): number {
  if (before.slots.length !== after.slots.length) throw new RangeError('maglev: tables of different sizes');
  let changed = 0;
  for (let s = 0; s < before.slots.length; s++) {
    const a = before.backends[before.slots[s] as number];
    const b = after.backends[after.slots[s] as number];
    if (a !== b) changed++;
  }
  return changed / before.slots.length;
}
