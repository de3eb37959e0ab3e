// Runs INSIDE the QEMU guest for `LVSD_LAB=guest npm start` (lab/guest.ts boots it): the failover scenario's
// LVS DR pair of two lvsd on IPVS (test/vm/guest/failover-scenario.ts), with 20 long-lived client connections
// through the VIP, a live line a second, the master's lvsd SIGKILLed after LVSD_LAB_FAILOVER_AFTER seconds or
// when the host pokes /run/lvsd-ctl/failover (Enter), then the figures.
import { existsSync } from 'node:fs';
import { runFailover } from '../test/vm/guest/failover-scenario.js';
import { figuresLines, liveLine } from './banner.js';

const afterS = Number(process.env.LVSD_LAB_FAILOVER_AFTER ?? 20);
const POKE = '/run/lvsd-ctl/failover';
const say = (l: string): void => { process.stdout.write(`${l}\n`); };

let trafficSince: number | undefined;
const killWhen = new Promise<void>((resolve) => {
  const poll = setInterval(() => {
    if (trafficSince === undefined) return;
    if (existsSync(POKE) || Date.now() - trafficSince >= afterS * 1000) {
      clearInterval(poll);
      say('>>> SIGKILL to d1\'s lvsd and its VRRP engine (the master crashes)');
      resolve();
    }
  }, 250);
});

say('guest: building the namespaces (client, d1, d2, r1–r3) and starting two lvsd directors on IPVS (DR, sync daemon)…');
const f = await runFailover('lvsd', {
  methods: ['dr'],
  connections: 20,
  afterMs: 12_000,
  killWhen,
  // The scenario's own log, without the directors' whole start-up logs it prints for a failed test.
  log: (l) => { if (!l.startsWith("d1's log:")) say(`guest: ${l}`); },
  live: (s) => {
    trafficSince ??= Date.now();
    say(liveLine(s, Math.round((Date.now() - trafficSince) / 1000)));
  },
});
say(`\nwhat happened:\n${figuresLines(f)}`);
// "VIP on BOTH" after the kill is what a crash looks like, with keepalived too; say so before anyone worries.
say('  "VIP on BOTH": a SIGKILLed lvsd (like a SIGKILLed keepalived) cannot take its addresses down; d2\'s gratuitous\n' +
  '  ARPs moved the traffic to d2, and d1\'s lvsd removes the stale VIP when it starts again.');
// The scenario's namespaces and d2's lvsd keep handles open; the guest powers off once this script ends.
process.exit(f.kept === f.total ? 0 : 1);
