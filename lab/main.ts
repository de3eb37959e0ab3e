// `npm start`: brings the HA lab up, prints where everything is, and keeps it running until Ctrl-C,
// then tears every namespace and process down.
import { Lab, LAB } from './lab.js';
import { existsSync } from 'node:fs';
import { dataplaneLine, labBanner } from './banner.js';

// LVSD_LAB=ecmp: the active-active lab (lab/ecmp.ts) instead; it runs until Ctrl-C and exits from there.
if (process.env.LVSD_LAB === 'ecmp') await (await import('./ecmp.js')).runEcmpLab();

const ports: [number, number] = [Number(process.env.LVSD_LAB_PORT1 ?? 9181), Number(process.env.LVSD_LAB_PORT2 ?? 9182)];
const dataplane = process.env.LVSD_LAB_DATAPLANE === 'userspace' ? 'userspace' : 'nftables';

const ipvs = existsSync('/proc/net/ip_vs')
  ? { available: true, reason: '/proc/net/ip_vs is there' }
  : { available: false, reason: 'no /proc/net/ip_vs (ip_vs not built in or not loaded)' };
process.stdout.write(`lvsd lab: building namespaces (client, d1, d2, rs1–rs3), ${dataplaneLine(dataplane, ipvs)}…\n`);
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
