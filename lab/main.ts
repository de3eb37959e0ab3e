// `npm start`: brings the HA lab up, prints where everything is, and keeps it running until Ctrl-C,
// then tears every namespace and process down. LVSD_LAB=guest runs the LVS DR pair in the QEMU guest instead
// (lab/guest.ts); lab/options.ts decides.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Lab, LAB } from './lab.js';
import { dataplaneLine, labBanner } from './banner.js';
import { labChoice, type IpvsProbe } from './options.js';

// LVSD_LAB=ecmp: the active-active lab (lab/ecmp.ts) instead; it runs until Ctrl-C and exits from there.
if (process.env.LVSD_LAB === 'ecmp') await (await import('./ecmp.js')).runEcmpLab();

const ports: [number, number] = [Number(process.env.LVSD_LAB_PORT1 ?? 9181), Number(process.env.LVSD_LAB_PORT2 ?? 9182)];

/** ip_vs built in or loaded shows /proc/net/ip_vs; a module not loaded yet is loaded, as lvsd would at start. */
function probeIpvs(): IpvsProbe {
  if (existsSync('/proc/net/ip_vs')) return { available: true, reason: '/proc/net/ip_vs is there' };
  try {
    execFileSync('modprobe', ['ip_vs'], { stdio: 'ignore' });
  } catch {
    return { available: false, reason: 'no /proc/net/ip_vs and modprobe ip_vs failed: not built in, no module' };
  }
  return existsSync('/proc/net/ip_vs') ? { available: true, reason: 'modprobe ip_vs loaded it' } : { available: false, reason: 'no /proc/net/ip_vs after modprobe ip_vs' };
}

let choice;
try {
  choice = labChoice(process.env, probeIpvs());
} catch (e) {
  process.stderr.write(`lvsd lab: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(2);
}
if (choice.mode === 'guest') {
  const { runGuestLab } = await import('./guest.js');
  process.exit(await runGuestLab(choice.failoverAfterS));
}
const dataplane = choice.dataplane;
process.stdout.write(`lvsd lab: building namespaces (client, d1, d2, rs1–rs3), ${dataplaneLine(choice)}…\n`);
const lab = await Lab.up({ apiPorts: ports, dataplane });
process.stdout.write(labBanner({ vip: LAB.vip, clientNs: lab.client.name, ports, directors: lab.directors, password: lab.adminPassword }));

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nlvsd lab: tearing down…\n');
  void lab.down().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
