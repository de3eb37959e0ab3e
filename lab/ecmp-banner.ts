// What `LVSD_LAB=ecmp npm start` prints once the active-active lab is up, and the commands it offers: a graceful
// stop of one director, its start again, an operator's withdraw, a crash of one director's link. Pure, so a unit
// test can read the hints and run them against stand-in processes. Each hint names one director's pid file or
// namespace: network namespaces do not isolate process ids, so a pkill would stop every director on the host.
import { join } from 'node:path';

export interface EcmpBannerDirector {
  name: string;
  /** Its network namespace. */
  ns: string;
  /** Its next hop on the router (the core address). */
  core: string;
  panelPort: number;
}

export interface EcmpBannerInput {
  vip: string;
  /** The lab's folder: configs, logs, pid files, sockets, named by director (`d1-lvsd.pid`…). */
  dir: string;
  cli: string;
  routerNs: string;
  clientNs: string;
  /** What `ip route show VIP` printed on the router just now. */
  route: string;
  directors: readonly EcmpBannerDirector[];
  password: string;
}

/** Where the lab records a director's lvsd pid while it runs. */
export const ecmpPidFile = (dir: string, name: string): string => join(dir, `${name}-lvsd.pid`);

export const gracefulStopCommand = (dir: string, name: string): string => `kill $(cat ${ecmpPidFile(dir, name)})`;

export function ecmpBanner(b: EcmpBannerInput): string {
  const [first, second, third] = b.directors;
  if (first === undefined || second === undefined || third === undefined) throw new Error('the ECMP lab banner needs three directors');
  const file = (name: string, what: string): string => join(b.dir, `${name}-${what}`);
  const rows = b.directors.map((d) =>
    `  director ${d.name}      http://127.0.0.1:${String(d.panelPort)}/   next hop ${d.core}   log: ${file(d.name, 'lvsd.log')}   BIRD: birdc -s ${file(d.name, 'bird.ctl')} show protocols`);
  return `
lvsd ECMP lab is up: every director runs lvsd (nftables, mh) and BIRD, and announces ${b.vip}/32 to a BIRD router
that spreads flows over them (ECMP, L4 hash); each director sends a flow to the same real server.
  route            ${b.route.trim().split('\n').join('\n                   ')}
  watch it         watch -n 0.5 ip -n ${b.routerNs} route show ${b.vip}
  try it           ip netns exec ${b.clientNs} curl -s http://${b.vip}/who   (the real server, and the director's back address it saw)
${rows.join('\n')}
  panel login      admin / ${b.password}
  graceful stop    ${gracefulStopCommand(b.dir, first.name)}   (${first.name}'s lvsd only: graceful-shutdown community, drain, withdraw)
  start it again   ip netns exec ${first.ns} node ${b.cli} run --config ${file(first.name, 'lvsd.yaml')} --state ${file(first.name, 'state.json')}
  withdraw         ip netns exec ${second.ns} node ${b.cli} bgp withdraw ${b.vip}/32 --socket ${file(second.name, 'lvsd.sock')}   (${second.name} only; or the panel; bgp restore undoes it)
  crash a link     ip -n ${third.ns} link set eth0 down   (${third.name}: the router's hold timer, 3 s, withdraws it; back: ip -n ${third.ns} link set eth0 up && ip -n ${third.ns} route replace default via 10.71.0.254)
Ctrl-C tears it all down.
`;
}
