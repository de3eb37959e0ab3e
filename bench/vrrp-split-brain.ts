// Split-brain answer, keepalived and lvsd side by side in one run, on namespaces of this machine.
//   npx tsc -p tsconfig.json && node dist/bench/vrrp-split-brain.js [--runs 2] [--seconds 10]
// The better master (priority 150, advert every 3 s) is keepalived, then lvsd; the worse one is always
// keepalived (priority 100, every 0.5 s). A partition (nft on the worse node) makes both MASTER; then
// only the worse node's adverts get out again, so the better master hears one lower-priority advert
// every 0.5 s that it must answer (its answers are still dropped on the way in). A third namespace
// captures the segment and times, per lower-priority advert: the better master's answering advert and
// its first gratuitous ARP, and counts GARPs per advert. Prints medians and the ratio lvsd / keepalived
// (keepalived is the anchor). Never fails on timing.
import { createLab, lvsdOptions, sleep, VIP4 } from '../test/support/vrrp-lab.js';
import { startLvsdNode } from '../test/support/vrrp-node.js';
import { keepalivedConf, startKeepalived } from '../test/support/keepalived.js';
import { removeStaleNamespaces } from '../test/support/netns.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RUNS = Number(opt('runs') ?? 2);
const SECONDS = Number(opt('seconds') ?? 10);

type Impl = 'keepalived' | 'lvsd';
interface Sample {
  answerMs: number[];
  garpMs: number[];
  garpsPerAdvert: number[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

async function once(better: Impl, into: Sample): Promise<void> {
  const lab = await createLab('sbbench', 3);
  const [d1, d2, d3] = lab.hosts;
  if (d1 === undefined || d2 === undefined || d3 === undefined) throw new Error('lab has no three hosts');
  const stops: (() => Promise<void>)[] = [];
  try {
    if (better === 'keepalived') {
      // Second burst 1 s later: vrrp_garp_lower_prio_delay defaults to vrrp_garp_master_delay.
      const k = await startKeepalived(d1, keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, version: 3, interval: 3, vips: [`${VIP4}/24`] }], 'better', ['vrrp_garp_master_delay 1']));
      stops.push(() => k.kill());
      await k.waitForLog(/Entering MASTER STATE/, 20_000);
    } else {
      const l = await startLvsdNode(d1, lvsdOptions({ priority: 150, advertIntervalMs: 3000, garp: { masterDelayMs: 0, lowerPrioDelayMs: 1000 } }));
      stops.push(() => l.kill());
      await l.waitState('VI_1', 'MASTER', 20_000);
    }
    const w = await startKeepalived(d2, keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, version: 3, interval: 0.5, vips: [`${VIP4}/24`] }], 'worse'));
    stops.push(() => w.kill());
    await sleep(1000);
    await d2.sh(
      "nft add table inet split && nft add chain inet split in '{ type filter hook input priority 0; }' && nft add chain inet split out '{ type filter hook output priority 0; }'" +
        ' && nft add rule inet split in ip protocol 112 drop && nft add rule inet split out ip protocol 112 drop',
    );
    await w.waitForLog(/Entering MASTER STATE/, 20_000);
    const cap = d3.spawn('tcpdump', ['-l', '-n', '-tt', '-i', 'eth0', 'arp or ip proto 112']);
    let out = '';
    cap.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await sleep(800);
    await d2.sh('nft delete chain inet split out');
    await sleep(SECONDS * 1000);
    // Silence the worse node again and let the last delayed bursts go out, so every advert's GARPs are counted.
    await d2.sh("nft add chain inet split out '{ type filter hook output priority 0; }' && nft add rule inet split out ip protocol 112 drop");
    await sleep(1500);
    await new Promise<void>((r) => {
      cap.once('exit', () => { r(); });
      cap.kill('SIGINT');
    });
    const frames = out
      .split('\n')
      .map((l) => ({ t: Number(l.split(' ')[0]), kind: l.includes('10.77.0.2 > 224.0.0.18') ? 'lower' : l.includes('10.77.0.1 > 224.0.0.18') ? 'answer' : l.includes(`who-has ${VIP4} `) ? 'garp' : '' }))
      .filter((f) => f.kind !== '' && Number.isFinite(f.t));
    const lowers = frames.filter((f) => f.kind === 'lower');
    for (const [i, f] of frames.entries()) {
      if (f.kind !== 'lower') continue;
      const rest = frames.slice(i + 1);
      const a = rest.find((x) => x.kind === 'answer');
      if (a !== undefined) into.answerMs.push((a.t - f.t) * 1000);
      const g = rest.find((x) => x.kind === 'garp');
      if (g !== undefined) into.garpMs.push((g.t - f.t) * 1000);
    }
    const garps = frames.filter((f) => f.kind === 'garp').length;
    if (lowers.length > 0) into.garpsPerAdvert.push(garps / lowers.length);
  } finally {
    for (const s of stops) await s().catch(() => undefined);
    lab.destroy();
  }
}

removeStaleNamespaces();
const results = new Map<Impl, Sample>();
for (let r = 0; r < RUNS; r++) {
  for (const impl of ['keepalived', 'lvsd'] as const) {
    const s = results.get(impl) ?? { answerMs: [], garpMs: [], garpsPerAdvert: [] };
    results.set(impl, s);
    await once(impl, s);
  }
}
const f = (x: number): string => x.toFixed(2);
console.log(`split-brain answer, ${RUNS} run(s) × ${SECONDS} s, lower-priority adverts every 0.5 s (medians, ms)`);
console.log('better master | n | lower advert → answer | → first GARP | GARPs per lower advert');
for (const [impl, s] of results) console.log(`${impl} | ${s.answerMs.length} | ${f(median(s.answerMs))} | ${f(median(s.garpMs))} | ${f(median(s.garpsPerAdvert))}`);
const k = results.get('keepalived');
const l = results.get('lvsd');
if (k !== undefined && l !== undefined) {
  console.log(`ratio lvsd / keepalived: answer ${f(median(l.answerMs) / median(k.answerMs))}, first GARP ${f(median(l.garpMs) / median(k.garpMs))}, GARPs per advert ${f(median(l.garpsPerAdvert) / median(k.garpsPerAdvert))}`);
}
process.exit(0);
