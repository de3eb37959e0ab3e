// Shared helpers of the VRRP integration tests: a segment of directors, VIP checks, GARP captures.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { removeStaleNamespaces, Topology, type Netns } from './netns.js';
import { requireCommands, requireRoot } from './prereq.js';
import type { VrrpInstanceOptions, VrrpOptions } from '../../daemon/vrrp/options.js';
import type { Keepalived } from './keepalived.js';
import type { LvsdNode } from './vrrp-node.js';

export const VIP4 = '10.77.0.100';
export const VIP6 = 'fd77::100';

export interface Lab {
  topo: Topology;
  hosts: Netns[];
  /** Address of host i (1-based) on the segment. */
  ip4(i: number): string;
  ip6(i: number): string;
  /** Names of the hosts that hold `vip` on `ifname` (default eth0) right now. */
  holders(vip: string, ifname?: string): Promise<string[]>;
  destroy(): void;
}

export async function createLab(tag: string, n: number): Promise<Lab> {
  const topo = await Topology.create(tag);
  const hosts: Netns[] = [];
  try {
    for (let i = 1; i <= n; i++) hosts.push(await topo.addHost({ name: `d${i}`, addresses: [`10.77.0.${i}/24`, `fd77::${i}/64`] }));
  } catch (e) {
    topo.destroy();
    throw e;
  }
  return {
    topo,
    hosts,
    ip4: (i) => `10.77.0.${i}`,
    ip6: (i) => `fd77::${i}`,
    holders: async (vip, ifname = 'eth0') => {
      const out: string[] = [];
      for (const [i, h] of hosts.entries()) {
        if ((await h.addresses(ifname).catch(() => [])).some((a) => a.split('/')[0] === vip)) out.push(`d${i + 1}`);
      }
      return out;
    },
    destroy: () => {
      topo.destroy();
    },
  };
}

/** A test file's lab, built once for the file (see labSuite). */
export interface LabSuite {
  /** The lab (only once before() has run). */
  readonly lab: Lab;
  /** Host i (1-based). */
  host: (i: number) => Netns;
  /** Stops `node` at stopAll() and when the file ends. */
  own: <T extends { kill: () => Promise<unknown> }>(node: T) => T;
  /** Stops every node owned so far, in the order they were started (a failure to stop is thrown). */
  stopAll: () => Promise<void>;
}

/**
 * Registers the file's before/after: root and `commands` required (a missing one fails loudly), stale
 * namespaces removed, a lab of `n` hosts built; at the end every owned node stopped and the lab removed.
 */
export function labSuite(tag: string, n: number, commands: readonly string[]): LabSuite {
  let lab: Lab | undefined;
  const owned: (() => Promise<unknown>)[] = [];
  before(async () => {
    requireRoot();
    requireCommands(...commands);
    removeStaleNamespaces();
    lab = await createLab(tag, n);
  });
  after(async () => {
    for (const stop of owned.splice(0)) await stop().catch(() => undefined);
    lab?.destroy();
  });
  const built = (): Lab => lab ?? assert.fail(`the ${tag} lab is not built (before() has not run)`);
  return {
    get lab() {
      return built();
    },
    host: (i) => built().hosts[i - 1] ?? assert.fail(`no host d${String(i)}`),
    own: (node) => {
      owned.push(() => node.kill());
      return node;
    },
    stopAll: async () => {
      for (const stop of owned.splice(0)) await stop();
    },
  };
}

/** One lvsd instance with test-friendly defaults (v3, 0.1 s, no delayed second GARP burst). */
export function lvsdOptions(o: Partial<VrrpInstanceOptions> & { priority: number }, extra: Partial<VrrpOptions> = {}): VrrpOptions {
  return {
    instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, advertIntervalMs: 100, vips: [`${VIP4}/24`], ...o }],
    garp: { masterDelayMs: 0 },
    ...extra,
  };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== null && v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Gratuitous ARPs for `vip` in a tcpdump -e text capture: the sender MACs that announced it. */
export function garpSenders(capture: string, vip: string): string[] {
  const re = new RegExp(`^\\S+ ([0-9a-f:]{17}) > ff:ff:ff:ff:ff:ff, ethertype ARP.*Request who-has ${vip.replace(/\./g, '\\.')} .*tell ${vip.replace(/\./g, '\\.')},`, 'gm');
  return [...capture.matchAll(re)].map((m) => m[1] ?? '');
}

/** Unsolicited neighbour advertisements for `vip` (sender MACs). */
export function naSenders(capture: string, vip: string): string[] {
  const re = new RegExp(`^\\S+ ([0-9a-f:]{17}) > 33:33:00:00:00:01, .*${vip} > ff02::1: ICMP6, neighbor advertisement, tgt is ${vip}`, 'gm');
  return [...capture.matchAll(re)].map((m) => m[1] ?? '');
}

export async function macOf(ns: Netns, ifname = 'eth0'): Promise<string> {
  const { stdout } = await ns.exec('cat', [`/sys/class/net/${ifname}/address`]);
  return stdout.trim();
}

/**
 * dynamic_interfaces: the instance's link deleted under keepalived and lvsd (both go to FAULT), then made again
 * (both MASTER again). Returns where keepalived's log stood before the link was made again.
 */
export async function relinkBoth(k: Keepalived, l: LvsdNode, drop: () => Promise<unknown>, make: () => Promise<unknown>, instance = 'VI_1'): Promise<number> {
  const since = performance.timeOrigin + performance.now(); // waitState's `since` is a time (the transitions' mono)
  await drop();
  await Promise.all([k.waitForLog(/Entering FAULT STATE/, 10_000), l.waitState(instance, 'FAULT', 10_000, since)]);
  const kAt = k.log().length;
  const again = performance.timeOrigin + performance.now();
  await make();
  await Promise.all([
    waitFor('keepalived MASTER again', () => /Entering MASTER STATE/.test(k.log().slice(kAt)), 10_000),
    l.waitState(instance, 'MASTER', 10_000, again),
  ]);
  return kAt;
}
