// What `npm start` prints once the lab is up, and the one command it offers to fail the master over. Pure, so
// a unit test can read the hint and run it against stand-in processes.
import { join } from 'node:path';
import type { FailoverFigures, LiveStatus } from '../test/vm/guest/failover-scenario.js';
import { GUEST_COMMAND } from './options.js';

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
 * Which dataplane the lab forwards with, and why, for `npm start` to say; on a kernel without IPVS, where the
 * IPVS director pair can be watched instead.
 */
export function dataplaneLine(choice: { dataplane: string; why: string; ipvs: { available: boolean } }): string {
  return `dataplane ${choice.dataplane} (${choice.why})${choice.ipvs.available ? '' : `; to watch an LVS DR pair on IPVS fail over with its connections kept: ${GUEST_COMMAND}`}`;
}

/** One line a second of the guest demo (lab/guest-demo.ts): seconds since the traffic began, then the status. */
export function liveLine(s: LiveStatus, seconds: number): string {
  const vip = s.vip === 'both' ? 'VIP on BOTH' : s.vip === 'none' ? 'VIP on nobody' : `VIP on ${s.vip}`;
  return `${String(seconds).padStart(4)} s  ${vip.padEnd(13)} connections ${String(s.alive).padStart(3)}/${s.total} alive  answers ${String(s.answers).padStart(4)}/s  new ${s.newOk} ok${s.newFailed > 0 ? ` ${s.newFailed} FAILED` : ''}  ${s.phase}`;
}

/** What the guest demo prints at the end: the failover's figures, in words. */
export function figuresLines(f: Pick<FailoverFigures, 'kept' | 'total' | 'longestGapMs' | 'takeoverMs' | 'newAfterTakeover' | 'newFailedAfterTakeover' | 'newDuringGap' | 'newFailedDuringGap' | 'syncedBeforeKill' | 'syncMasterAfterMs'>): string {
  return [
    `long-lived connections kept across the master's SIGKILL: ${f.kept} of ${f.total}${f.kept === f.total ? '' : ' (some were lost)'}`,
    `the backup held ${f.syncedBeforeKill} synced connections before the kill; it took the VIP ${f.takeoverMs} ms after it`,
    `longest silence on a connection: ${f.longestGapMs} ms`,
    `new connections after the takeover: ${f.newAfterTakeover}, ${f.newFailedAfterTakeover} failed (during the takeover: ${f.newDuringGap}, ${f.newFailedDuringGap} failed)`,
    `the new master sends sync messages ${f.syncMasterAfterMs < 0 ? 'not within 60 s' : `${f.syncMasterAfterMs} ms after the takeover`}`,
  ].map((l) => `  ${l}\n`).join('');
}
