// `npm start`: brings the HA lab up, prints where everything is, and keeps it running until Ctrl-C,
// then tears every namespace and process down.
import { Lab, LAB } from './lab.js';

const ports: [number, number] = [Number(process.env.LVSD_LAB_PORT1 ?? 9181), Number(process.env.LVSD_LAB_PORT2 ?? 9182)];
const dataplane = process.env.LVSD_LAB_DATAPLANE === 'userspace' ? 'userspace' : 'nftables';

process.stdout.write(`lvsd lab: building namespaces (client, d1, d2, rs1–rs3), dataplane ${dataplane}…\n`);
const lab = await Lab.up({ apiPorts: ports, dataplane });
const [d1, d2] = lab.directors;
process.stdout.write(`
lvsd lab is up.
  VIP              http://${LAB.vip}/  (from the client namespace)
  try it           ip netns exec ${lab.client.name} curl -s http://${LAB.vip}/
  director d1      http://127.0.0.1:${ports[0]}/   (priority 150, should be MASTER)  log: ${d1?.dir ?? ''}/lvsd.log
  director d2      http://127.0.0.1:${ports[1]}/   (priority 100, BACKUP)            log: ${d2?.dir ?? ''}/lvsd.log
  panel login      admin / ${lab.adminPassword}
  fail over        ip netns exec ${d1?.ns.name ?? ''} pkill -f 'lvsd.yaml'   (or use the panel)
Ctrl-C tears it all down.
`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nlvsd lab: tearing down…\n');
  void lab.down().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
