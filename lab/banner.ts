// What `npm start` prints once the lab is up, and the one command it offers to fail the master over. Pure, so
// a unit test can read the hint and run it against stand-in processes.
import { join } from 'node:path';

/** Where the lab records a director's lvsd pid (only while it runs), so a hint can name that one process. */
export const pidFile = (d: { dir: string }): string => join(d.dir, 'lvsd.pid');

/**
 * The shell command that fails a director over: SIGTERM to that director's lvsd only (a graceful stop:
 * priority-0 advert, the backup takes the VIP at once). Not `ip netns exec NS pkill -f lvsd.yaml`: network
 * namespaces do not isolate process ids, so that kills every director on the host.
 */
export const failoverCommand = (d: { dir: string }): string => `kill $(cat ${pidFile(d)})`;

export interface BannerInput {
  vip: string;
  clientNs: string;
  ports: readonly [number, number];
  /** d1 (priority 150) and d2 (priority 100), in that order. */
  directors: readonly { name: string; dir: string }[];
  password: string;
}

export function labBanner(b: BannerInput): string {
  const [d1, d2] = b.directors;
  if (d1 === undefined || d2 === undefined) throw new Error('the lab banner needs both directors');
  return `
lvsd lab is up.
  VIP              http://${b.vip}/  (from the client namespace)
  try it           ip netns exec ${b.clientNs} curl -s http://${b.vip}/
  director ${d1.name}      http://127.0.0.1:${b.ports[0]}/   (priority 150, should be MASTER)  log: ${d1.dir}/lvsd.log
  director ${d2.name}      http://127.0.0.1:${b.ports[1]}/   (priority 100, BACKUP)            log: ${d2.dir}/lvsd.log
  panel login      admin / ${b.password}
  fail over        ${failoverCommand(d1)}   (stops ${d1.name}'s lvsd only; or use the panel)
Ctrl-C tears it all down.
`;
}

/**
 * Which dataplane the lab forwards with, and why, for `npm start` to say. The lab runs lvsd in network
 * namespaces on this host; an IPVS director pair needs a kernel with ip_vs, which the QEMU guest of test/vm has.
 */
export function dataplaneLine(chosen: string, ipvs: { available: boolean; reason: string }): string {
  const guest = 'an LVS DR pair on IPVS failing over with connections kept runs in the QEMU guest: node dist/bench/failover-guest.js';
  return ipvs.available
    ? `dataplane ${chosen} (this kernel has IPVS, but the lab's namespaces use ${chosen}; ${guest})`
    : `dataplane ${chosen} (this kernel has no IPVS: ${ipvs.reason}; ${guest})`;
}
