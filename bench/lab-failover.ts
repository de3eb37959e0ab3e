// Failover under traffic in the HA lab, side by side in one run: an lvsd pair vs a keepalived pair on
// the same namespaces, the same VIPs and the same nftables DNAT, VRRP v3 at the same advert interval.
// Master crash (SIGKILL) with continuous client traffic; for each: failed requests and the longest gap
// without a successful response. Prints the figures and the ratio lvsd / keepalived.
//   node dist/bench/lab-failover.js [--runs 3] [--interval 0.1]
import { parseArgs } from 'node:util';
import { Lab, LAB, type TrafficStats } from '../lab/lab.js';
import { keepalivedConf, startKeepalived, type Keepalived } from '../test/support/keepalived.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, interval: { type: 'string', default: '0.1' } } });
const runs = Number(values.runs);
const intervalS = Number(values.interval);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
}

async function crashUnderTraffic(lab: Lab, crash: () => Promise<void>): Promise<TrafficStats> {
  const traffic = lab.traffic(4);
  await sleep(1000);
  await crash();
  await until(async () => (await lab.vipHolders()).includes('d2'));
  await sleep(1500);
  return traffic.stop();
}

function summary(name: string, results: TrafficStats[]): { failed: number; gap: number } {
  const failed = results.map((r) => r.failed);
  const gaps = results.map((r) => r.longestGapMs);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  console.log(`${name.padEnd(16)} failed per crash ${failed.join(', ').padEnd(14)} longest gap ms ${gaps.join(', ')}  (median ${median(failed)} failed, ${median(gaps)} ms)`);
  return { failed: median(failed), gap: median(gaps) };
}

const lab = await Lab.up({ advertInterval: `${Math.round(intervalS * 1000)}ms`, checkInterval: '1s' });
try {
  await until(async () => JSON.stringify(await lab.vipHolders()) === '["d1"]');
  const lvsd: TrafficStats[] = [];
  for (let i = 0; i < runs; i++) {
    lvsd.push(await crashUnderTraffic(lab, () => lab.stopDirector('d1', 'SIGKILL').then(() => undefined)));
    await lab.startDirector('d1');
    await until(async () => JSON.stringify(await lab.vipHolders()) === '["d1"]');
    await sleep(1000);
  }

  // The same lab with keepalived doing VRRP: lvsd stops (its nftables table stays programmed, as IPVS
  // entries would), keepalived takes over the VIPs.
  await lab.stopDirector('d1', 'SIGTERM');
  await lab.stopDirector('d2', 'SIGTERM');
  const conf = (priority: number, id: string): string =>
    keepalivedConf([{ name: 'VI_WEB', interface: 'eth0', vrid: 51, priority, version: 3, interval: intervalS, vips: [`${LAB.vip}/24 dev eth0`, `${LAB.backVip}/24 dev eth1`] }], id);
  const kad: Keepalived[] = [];
  kad.push(await startKeepalived(lab.director('d2').ns, conf(100, 'd2')));
  const keepalived: TrafficStats[] = [];
  for (let i = 0; i < runs; i++) {
    const k1 = await startKeepalived(lab.director('d1').ns, conf(150, 'd1'));
    await until(async () => JSON.stringify(await lab.vipHolders()) === '["d1"]');
    await sleep(1000);
    keepalived.push(await crashUnderTraffic(lab, () => k1.kill()));
    // keepalived leaves the VIP on a node it crashed on: clear it as an operator would before the next run.
    for (const v of [`${LAB.vip}/24`, `${LAB.backVip}/24`]) {
      await lab.director('d1').ns.exec('ip', ['addr', 'del', v, 'dev', v.startsWith(LAB.vip) ? 'eth0' : 'eth1']).catch(() => undefined);
    }
  }
  for (const k of kad) await k.stop();

  console.log(`\nmaster crash under traffic, VRRP v3 advert ${intervalS} s, ${runs} runs each (4 clients, new connection per request)`);
  const a = summary('lvsd pair', lvsd);
  const b = summary('keepalived pair', keepalived);
  console.log(`ratio lvsd/keepalived: failed ${(a.failed / Math.max(1, b.failed)).toFixed(2)}, longest gap ${(a.gap / b.gap).toFixed(2)}`);
} finally {
  await lab.down();
}
