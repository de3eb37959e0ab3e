// What this machine lets lvsd do, found without side effects (no module loading, no sockets):
// IPVS in the kernel, nftables, CAP_NET_RAW (VRRP raw sockets), CAP_NET_ADMIN (addresses, IPVS).
// `lvsd run` logs this plainly at start and keeps running what it can; the dataplane choice for
// `dataplane: auto` follows from it (planDataplane is pure, so it is tested as a table).
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { release } from 'node:os';
import { gunzipSync } from 'node:zlib';
import type { DataplaneChoice } from '../config/types.js';
import type { DataplaneKind } from '../dataplane/types.js';

export type Availability = 'yes' | 'loadable' | 'no';

export interface Capabilities {
  root: boolean;
  /** CAP_NET_RAW: raw IP sockets for VRRP adverts and gratuitous ARP. */
  netRaw: boolean;
  /** CAP_NET_ADMIN: VIPs (rtnetlink), IPVS (generic netlink), nftables. */
  netAdmin: boolean;
  /** yes = /proc/net/ip_vs exists; loadable = the ip_vs module is on disk (modprobe ip_vs). */
  ipvs: Availability;
  /** yes = nf_tables is in the kernel and `nft` is installed. */
  nftables: Availability;
  nftBinary: boolean;
}

const CAP_NET_ADMIN = 12;
const CAP_NET_RAW = 13;

/** The effective capability bits from /proc/self/status text. */
export function parseCapEff(status: string): bigint {
  const m = /^CapEff:\s*([0-9a-fA-F]+)$/m.exec(status);
  return m?.[1] ? BigInt(`0x${m[1]}`) : 0n;
}

export function hasCap(capEff: bigint, bit: number): boolean {
  return ((capEff >> BigInt(bit)) & 1n) === 1n;
}

/** File-system probes, injectable for tests. */
export interface ProbeFs {
  exists(path: string): boolean;
  read(path: string): string | undefined;
  executable(path: string): boolean;
  /** The running kernel's config (/proc/config.gz), if the kernel exposes it. */
  kernelConfig(): string | undefined;
}

export const realFs: ProbeFs = {
  exists: (p) => existsSync(p),
  read: (p) => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  },
  executable: (p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
  kernelConfig: () => {
    try {
      return gunzipSync(readFileSync('/proc/config.gz')).toString('utf8');
    } catch {
      return undefined;
    }
  },
};

/** "y", "m" or undefined for CONFIG_NAME in a kernel config. */
export function kernelOption(config: string | undefined, name: string): 'y' | 'm' | undefined {
  const m = new RegExp(`^CONFIG_${name}=([ym])$`, 'm').exec(config ?? '');
  return m?.[1] === 'y' ? 'y' : m?.[1] === 'm' ? 'm' : undefined;
}

function moduleOnDisk(fs: ProbeFs, kernel: string, name: string): boolean {
  const dep = fs.read(`/lib/modules/${kernel}/modules.dep`);
  return dep !== undefined && new RegExp(`/${name}\\.ko(\\.[a-z]+)?:`).test(dep);
}

export function probeCapabilities(fs: ProbeFs = realFs, env: { uid: number; path: string; kernel: string } = {
  uid: process.getuid?.() ?? -1,
  path: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
  kernel: release(),
}): Capabilities {
  const capEff = parseCapEff(fs.read('/proc/self/status') ?? '');
  const modules = fs.read('/proc/modules') ?? '';
  const builtin = fs.read(`/lib/modules/${env.kernel}/modules.builtin`) ?? '';
  const nftBinary = [...env.path.split(delimiter), '/usr/sbin', '/sbin'].some((d) => d !== '' && fs.executable(join(d, 'nft')));

  const kconfig = fs.kernelConfig();
  const ipvs: Availability = fs.exists('/proc/net/ip_vs')
    ? 'yes'
    : moduleOnDisk(fs, env.kernel, 'ip_vs') || kernelOption(kconfig, 'IP_VS') === 'm'
      ? 'loadable'
      : 'no';
  const nfKernel: Availability =
    fs.exists('/sys/module/nf_tables') || /^nf_tables /m.test(modules) || builtin.includes('/nf_tables.ko') || kernelOption(kconfig, 'NF_TABLES') === 'y'
      ? 'yes'
      : moduleOnDisk(fs, env.kernel, 'nf_tables') || kernelOption(kconfig, 'NF_TABLES') === 'm'
        ? 'loadable'
        : 'no';
  return {
    root: env.uid === 0,
    netRaw: hasCap(capEff, CAP_NET_RAW),
    netAdmin: hasCap(capEff, CAP_NET_ADMIN),
    ipvs,
    nftables: nftBinary ? nfKernel : 'no',
    nftBinary,
  };
}

export interface DataplanePlan {
  kind: DataplaneKind;
  /** Plain words for the log and the panel. */
  reason: string;
}

/**
 * Which dataplane to use. `auto` takes the first that can work: ipvs, nftables, userspace.
 * An explicit choice is honoured; when the machine cannot do it, the reason says so (the
 * backend then reports its own error and lvsd keeps running what it can).
 */
export function planDataplane(choice: DataplaneChoice, caps: Capabilities): DataplanePlan {
  const ipvsOk = caps.netAdmin && caps.ipvs !== 'no';
  const nftOk = caps.netAdmin && caps.nftables !== 'no';
  if (choice === 'ipvs')
    return { kind: 'ipvs', reason: ipvsOk ? 'configured: ipvs' : `configured: ipvs, but ${!caps.netAdmin ? 'CAP_NET_ADMIN is missing' : 'the kernel has no IPVS'}` };
  if (choice === 'nftables')
    return { kind: 'nftables', reason: nftOk ? 'configured: nftables' : `configured: nftables, but ${!caps.netAdmin ? 'CAP_NET_ADMIN is missing' : 'nf_tables or the nft tool is missing'}` };
  if (choice === 'userspace') return { kind: 'userspace', reason: 'configured: userspace' };
  if (ipvsOk) return { kind: 'ipvs', reason: caps.ipvs === 'yes' ? 'auto: IPVS is in the kernel' : 'auto: the ip_vs module can be loaded' };
  if (nftOk) return { kind: 'nftables', reason: `auto: no IPVS${caps.ipvs === 'no' ? ' in this kernel' : ''}; nftables is available` };
  return { kind: 'userspace', reason: `auto: ${caps.netAdmin ? 'neither IPVS nor nftables is available' : 'no CAP_NET_ADMIN (not root?)'}; using the userspace proxy` };
}

/** One plain sentence per capability, for the start-up log. */
export function describeCapabilities(c: Capabilities): { ok: boolean; text: string }[] {
  return [
    { ok: c.ipvs !== 'no', text: c.ipvs === 'yes' ? 'IPVS: available in the kernel' : c.ipvs === 'loadable' ? 'IPVS: ip_vs module present, not loaded yet' : 'IPVS: not available in this kernel' },
    { ok: c.nftables !== 'no', text: c.nftables === 'no' ? `nftables: not available${c.nftBinary ? '' : ' (no nft tool)'}` : 'nftables: available' },
    { ok: c.netRaw, text: c.netRaw ? 'raw sockets (CAP_NET_RAW): yes — VRRP can run' : 'raw sockets (CAP_NET_RAW): no — VRRP cannot send or receive adverts; run as root or grant CAP_NET_RAW' },
    { ok: c.netAdmin, text: c.netAdmin ? 'network admin (CAP_NET_ADMIN): yes' : 'network admin (CAP_NET_ADMIN): no — VIPs cannot be added, IPVS and nftables cannot be programmed' },
  ];
}
