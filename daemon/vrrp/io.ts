// The runtime's I/O on a real host: rtnetlink, raw VRRP sockets, GARP/NA, the system's uptime.
import { readFileSync, writeFileSync } from 'node:fs';
import { Rtnl } from '../net/rtnl.js';
import { VrrpSocket } from '../net/vrrp-socket.js';
import { GarpSender } from '../net/garp.js';
import { IGMP_LINK_LOCAL_REPORTS } from './local-igmp.js';
import type { RuntimeIo } from './runtime.js';

/** `onError`: rtnetlink trouble that is reported, not fatal (a lost event is recovered by re-reading). */
export function hostIo(onError: (e: Error) => void = () => undefined): RuntimeIo {
  const rtnl = new Rtnl(onError);
  const garp = new GarpSender();
  return {
    links: () => rtnl.links(),
    addresses: (i) => rtnl.addresses(i),
    addAddress: (i, c, o) => rtnl.addAddress(i, c, o),
    delAddress: (i, c, o) => rtnl.delAddress(i, c, o),
    watchLinks: (f) => {
      rtnl.watchLinks(f);
    },
    watchAddresses: (f) => {
      rtnl.watchAddresses(f);
    },
    addRoute: (m) => rtnl.addRoute(m.data, m.attrs),
    delRoute: (m) => rtnl.delRoute(m.data, m.attrs),
    addRule: (m) => rtnl.addRule(m.data, m.attrs),
    delRule: (m) => rtnl.delRule(m.data, m.attrs),
    openSocket: (o, onPacket, onError) => new VrrpSocket(o, onPacket, onError),
    announce: (ifname, ifindex, vip) => {
      garp.announce(ifname, ifindex, vip);
    },
    prepareAnnounce: (ifname, family) => {
      garp.prepare(ifname, family);
    },
    uptimeMs: () => {
      // keepalived reads /proc/uptime for vrrp_delay_after_boot and ignores the setting if it cannot.
      try {
        const secs = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
        return Number.isFinite(secs) ? secs * 1000 : null;
      } catch {
        return null;
      }
    },
    localIgmpReports: {
      read: () => readFileSync(IGMP_LINK_LOCAL_REPORTS, 'utf8'),
      write: (v) => { writeFileSync(IGMP_LINK_LOCAL_REPORTS, `${v}\n`); },
    },
    close: () => {
      garp.close();
      rtnl.close();
    },
  };
}
