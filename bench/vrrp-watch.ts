// Runs inside the backup's namespace during bench/vrrp-failover: notes when the master's adverts
// arrive (its own raw socket copy) and when the VIP appears on the interface (rtnetlink event), and
// prints {kind:'vip', at, lastAdvertAt, prio0At} with wall-clock ms (performance.timeOrigin-based).
import { createRtNetlink, rt } from 'netlink';
import { VrrpSocket } from '../daemon/net/vrrp-socket.js';
import { formatIP } from '../daemon/net/addr.js';

const a = JSON.parse(process.argv[2] ?? '{}') as { ifname: string; ifindex: number; vip: string; master: string };
const now = (): number => performance.timeOrigin + performance.now();
let lastAdvertAt = 0;
let prio0At = 0;
const sock = new VrrpSocket(
  { family: 4, ifname: a.ifname, ifindex: a.ifindex, multicast: true },
  (p) => {
    if (formatIP(p.src) !== a.master) return;
    // priority is byte 2 of the VRRP message (v2 and v3 alike)
    if (p.payload[2] === 0) prio0At = now();
    else lastAdvertAt = now();
  },
  () => undefined,
);
const nl = createRtNetlink();
nl.addMembership('IPV4_IFADDR');
nl.socket.on('message', (msgs) => {
  for (const m of msgs) {
    if (m.type !== 20) continue; // RTM_NEWADDR
    const am = rt.parseAddressMessage(m.data);
    const local = am.attrs.local ?? am.attrs.address;
    if (local !== undefined && formatIP(local) === a.vip) {
      process.stdout.write(JSON.stringify({ kind: 'vip', at: now(), lastAdvertAt, prio0At }) + '\n');
    }
  }
});
process.stdout.write(JSON.stringify({ kind: 'ready' }) + '\n');
process.on('SIGTERM', () => {
  sock.close();
  nl.socket.close();
  process.exit(0);
});
