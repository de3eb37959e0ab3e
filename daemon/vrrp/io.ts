// The runtime's I/O on a real host: rtnetlink, raw VRRP sockets, GARP/NA.
import { Rtnl } from '../net/rtnl.js';
import { VrrpSocket } from '../net/vrrp-socket.js';
import { GarpSender } from '../net/garp.js';
import type { RuntimeIo } from './runtime.js';

export function hostIo(): RuntimeIo {
  const rtnl = new Rtnl();
  const garp = new GarpSender();
  return {
    links: () => rtnl.links(),
    addresses: (i) => rtnl.addresses(i),
    addAddress: (i, c, l) => rtnl.addAddress(i, c, l),
    delAddress: (i, c) => rtnl.delAddress(i, c),
    watchLinks: (f) => {
      rtnl.watchLinks(f);
    },
    openSocket: (o, onPacket, onError) => new VrrpSocket(o, onPacket, onError),
    announce: (ifname, ifindex, vip) => {
      garp.announce(ifname, ifindex, vip);
    },
    prepareAnnounce: (ifname, family) => {
      garp.prepare(ifname, family);
    },
    close: () => {
      garp.close();
      rtnl.close();
    },
  };
}
