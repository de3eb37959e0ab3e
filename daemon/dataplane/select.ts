// `dataplane: auto` — the first dataplane this host can run, and why, in words for the log and the panel:
//   ipvs       if the kernel knows the generic-netlink family "IPVS" (asking for it also lets the kernel
//              autoload ip_vs, as ipvsadm does)
//   nftables   else, if a table with a NAT hook can be created (created and deleted in one transaction,
//              so nothing is left behind)
//   userspace  else (no privilege, no kernel feature needed)
// An explicit choice is checked the same way and refused with the probe's reason when the host lacks it.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import type { DataplaneKind } from './types.js';

const run = promisify(execFile);

export type DataplanePreference = DataplaneKind | 'auto';

export interface ProbeResult {
  ok: boolean;
  /** What was found, in words ("generic netlink family IPVS has id 27", "nft: Operation not permitted"). */
  detail: string;
}

export interface DataplaneProbes {
  ipvs(): Promise<ProbeResult>;
  nftables(): Promise<ProbeResult>;
}

export interface Selection {
  kind: DataplaneKind;
  reason: string;
}

export class DataplaneUnavailable extends Error {
  constructor(
    readonly kind: DataplaneKind,
    detail: string,
  ) {
    super(`dataplane ${kind} was chosen in the config but this host cannot run it: ${detail}`);
    this.name = 'DataplaneUnavailable';
  }
}

/** Asks the generic-netlink controller for the family "IPVS". */
export async function probeIpvs(): Promise<ProbeResult> {
  let sock: { socket: { socket: { close(): void } } } | undefined;
  try {
    const nl = await import('netlink');
    const s = nl.createGenericNetlink();
    sock = s;
    const reply = await s.ctrlRequest(nl.genl.Commands.GET_FAMILY, { familyName: 'IPVS' }, { timeout: 2000 });
    const id = reply[0]?.familyId;
    return id === undefined
      ? { ok: false, detail: 'the generic-netlink controller answered without a family id for IPVS' }
      : { ok: true, detail: `the kernel has IPVS (generic-netlink family IPVS, id ${id})` };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { ok: false, detail: /ENOENT/.test(msg) ? 'the kernel has no IPVS (generic-netlink family IPVS not found, module ip_vs not loadable)' : `IPVS probe failed: ${msg}` };
  } finally {
    try {
      sock?.socket.socket.close();
    } catch {
      /* already closed */
    }
  }
}

export interface NftProbeOptions {
  nft?: string;
  netns?: string;
}

/** Creates and deletes a scratch inet table with a nat prerouting chain, in one transaction. */
export async function probeNftables(opts: NftProbeOptions = {}): Promise<ProbeResult> {
  const table = `lvsd-probe-${process.pid}`;
  const batch = JSON.stringify({
    nftables: [
      { add: { table: { family: 'inet', name: table } } },
      { add: { chain: { family: 'inet', table, name: 'pre', type: 'nat', hook: 'prerouting', prio: -100, policy: 'accept' } } },
      { delete: { table: { family: 'inet', name: table } } },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-probe-'));
  const file = join(dir, 'probe.json');
  writeFileSync(file, batch);
  const nft = opts.nft ?? 'nft';
  const [cmd, args] = opts.netns === undefined ? [nft, []] : ['ip', ['netns', 'exec', opts.netns, nft]];
  try {
    await run(cmd, [...args, '-j', '-f', file], { timeout: 10_000 });
    return { ok: true, detail: 'nf_tables can hold a NAT table here (created and deleted a probe table)' };
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    const why = err.code === 'ENOENT' ? `${nft} is not installed` : (err.stderr ?? err.message).trim().split('\n')[0] ?? 'unknown error';
    return { ok: false, detail: `nftables unusable: ${why}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function defaultProbes(opts: NftProbeOptions = {}): DataplaneProbes {
  return { ipvs: probeIpvs, nftables: () => probeNftables(opts) };
}

/** Picks the dataplane; logs the choice and the reason. Pure decision over the injected probes. */
export async function selectDataplane(pref: DataplanePreference, logger?: Logger, probes: DataplaneProbes = defaultProbes()): Promise<Selection> {
  let selection: Selection;
  if (pref === 'userspace') {
    selection = { kind: 'userspace', reason: 'chosen in the config (dataplane: userspace)' };
  } else if (pref === 'ipvs' || pref === 'nftables') {
    const p = await probes[pref]();
    if (!p.ok) throw new DataplaneUnavailable(pref, p.detail);
    selection = { kind: pref, reason: `chosen in the config (dataplane: ${pref}); ${p.detail}` };
  } else {
    const ipvs = await probes.ipvs();
    if (ipvs.ok) {
      selection = { kind: 'ipvs', reason: `auto: ${ipvs.detail}` };
    } else {
      const nft = await probes.nftables();
      selection = nft.ok
        ? { kind: 'nftables', reason: `auto: ${ipvs.detail}; ${nft.detail}` }
        : { kind: 'userspace', reason: `auto: ${ipvs.detail}; ${nft.detail}; the userspace proxy needs neither` };
    }
  }
  logger?.info({ dataplane: selection.kind, reason: selection.reason }, `dataplane: ${selection.kind}`);
  return selection;
}
