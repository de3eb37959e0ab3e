// Opens the dataplane the CLI planned (`dataplane:` in the config, `auto` resolved from what this machine
// has). When the planned one fails to open, the next one down the list is tried — ipvs → nftables →
// userspace — and the reason lands in the log and the panel: lvsd keeps running what it can.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { Dataplane, DataplaneKind } from '../dataplane/types.js';
import { createIpvsDataplane, type IpvsDataplane } from '../dataplane/ipvs/backend.js';
import { createNftablesDataplane } from '../dataplane/nftables/shards.js';
import { createUserspaceDataplane } from '../dataplane/userspace/backend.js';
import { drainPolicy } from './plan.js';
import type { SyncDaemonPort } from './vrrp-supervisor.js';

export interface OpenedDataplane {
  dataplane: Dataplane | null;
  kind: DataplaneKind | 'none';
  reason: string;
  /** The IPVS connection sync daemon (null on other dataplanes). */
  sync: SyncDaemonPort | null;
  /** Applies a reload's backend settings (IPVS: removal policy and timeouts) to the open backend. */
  retune(config: Config): Promise<void>;
}

type Opened = Pick<OpenedDataplane, 'dataplane' | 'sync' | 'retune'>;
const nothingToRetune = (): Promise<void> => Promise.resolve();

const ORDER: DataplaneKind[] = ['ipvs', 'nftables', 'userspace'];

/** ipvsadm --set: only the timeouts the config names; the rest keep the kernel's values. */
async function retuneIpvs(dp: IpvsDataplane, config: Config): Promise<void> {
  dp.setDrainPolicy(drainPolicy(config));
  const t = config.ipvs.timeouts;
  const secs = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms / 1000));
  const set = Object.fromEntries(Object.entries({ tcp: secs(t.tcpMs), tcpFin: secs(t.tcpFinMs), udp: secs(t.udpMs) }).filter(([, v]) => v !== undefined));
  if (Object.keys(set).length > 0) await dp.setTimeouts(set);
}

async function open(kind: DataplaneKind, config: Config, stateDir: string, log: Logger): Promise<Opened> {
  switch (kind) {
    case 'ipvs': {
      const dp = await createIpvsDataplane({ stateDir, drain: drainPolicy(config), logger: log.child({ dataplane: 'ipvs' }) });
      await retuneIpvs(dp, config);
      return { dataplane: dp, sync: dp, retune: (c) => retuneIpvs(dp, c) };
    }
    case 'nftables': {
      warnWithoutForwarding(config, log);
      const dp = createNftablesDataplane({ table: config.nftables.table, masquerade: config.nftables.masquerade, logger: log.child({ dataplane: 'nftables' }) });
      // nft is started lazily; an observe() proves it works before we promise anything.
      await dp.observe();
      return { dataplane: dp, sync: null, retune: nothingToRetune };
    }
    case 'userspace': {
      const pp = config.userspace.proxyProtocol;
      const dp = createUserspaceDataplane({
        idleTimeoutMs: config.userspace.idleTimeoutMs,
        ...(pp === 'none' ? {} : { proxyProtocol: pp === 'v1' ? 1 : 2 }),
        logger: log.child({ dataplane: 'userspace' }),
      });
      return { dataplane: dp, sync: null, retune: nothingToRetune };
    }
  }
}

/** NAT through the director needs IP forwarding; like keepalived, lvsd leaves the sysctl to the operator but says so. */
function warnWithoutForwarding(config: Config, log: Logger): void {
  const families = new Set(config.virtualServers.map((v) => v.family));
  for (const f of families) {
    const file = f === 4 ? '/proc/sys/net/ipv4/ip_forward' : '/proc/sys/net/ipv6/conf/all/forwarding';
    try {
      if (readFileSync(file, 'utf8').trim() === '0') {
        log.warn({ sysctl: file }, `IP forwarding is off (${file} = 0): NAT traffic through this director will not reach the real servers; set net.ipv${f === 4 ? '4.ip_forward' : '6.conf.all.forwarding'}=1`);
      }
    } catch {
      /* no such sysctl here: nothing to say */
    }
  }
}

export async function openDataplane(planned: { kind: DataplaneKind; reason: string }, config: Config, stateDir: string, log: Logger): Promise<OpenedDataplane> {
  const failures: string[] = [];
  for (const kind of ORDER.slice(ORDER.indexOf(planned.kind))) {
    try {
      const opened = await open(kind, config, stateDir, log);
      const reason = failures.length === 0 ? planned.reason : `${failures.join('; ')}; fell back to ${kind}`;
      return { ...opened, kind, reason };
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      failures.push(`${kind} failed to open (${why})`);
      log.error({ dataplane: kind, err: e }, `${kind} dataplane failed to open: ${why}`);
    }
  }
  return { dataplane: null, kind: 'none', reason: failures.join('; '), sync: null, retune: nothingToRetune };
}
