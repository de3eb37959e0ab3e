// track_process and the virtual_ipaddress options, lvsd against Debian's keepalived 2.2.7 on the same config.
//
// The kernel has the process events connector in the initial network namespace only (from any other one
// the subscription is refused: keepalived logs "Failed to set/clear process event listen - errno 111"). So
// the node under test — keepalived, then lvsd — runs in this machine's own namespace, on one end of a veth
// pair made for the test, the other end in a namespace of the test where an lvsd backup watches the master's
// advertised priority. Nothing else of the machine's network is touched; the veth goes at the end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Netns, removeStaleNamespaces } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { keepalivedConf, startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { sleep, waitFor } from '../support/vrrp-lab.js';
import type { VipOptions, VrrpOptions } from '../../daemon/vrrp/options.js';

/** The machine's own network namespace, with Netns's interface (only spawn is used by the node helpers). */
class HostNs extends Netns {
  override spawn(cmd: string, args: string[] = [], opts: SpawnOptions = {}): ChildProcess {
    return spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  }
}

const tag = String(process.pid % 100000);
const HOST_IF = `lvtp${tag}`;
const NS = `lvsd-tp-${tag}`;
const VIP = '10.79.0.100';
const ns = new Netns(NS);
const host = new HostNs('host');
let dir = '';
/** A copy of sleep under a name of this run: its comm is what the trackers look for. */
let procName = '';
const running: (() => Promise<unknown>)[] = [];
const own = <T extends { kill: () => Promise<unknown> }>(n: T): T => {
  running.push(() => n.kill());
  return n;
};

before(() => {
  requireRoot();
  requireCommands('ip', 'keepalived');
  removeStaleNamespaces();
  const ip = (...a: string[]): void => {
    execFileSync('ip', a, { stdio: 'ignore' });
  };
  ip('netns', 'add', NS);
  ip('link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', `${HOST_IF}p`);
  ip('link', 'set', `${HOST_IF}p`, 'netns', NS);
  ip('-n', NS, 'link', 'set', `${HOST_IF}p`, 'name', 'eth0');
  ip('-n', NS, 'link', 'set', 'eth0', 'up');
  ip('-n', NS, 'link', 'set', 'lo', 'up');
  ip('-n', NS, 'addr', 'add', '10.79.0.2/24', 'dev', 'eth0');
  ip('-n', NS, 'addr', 'add', 'fd79::2/64', 'dev', 'eth0', 'nodad');
  ip('addr', 'add', '10.79.0.1/24', 'dev', HOST_IF);
  ip('link', 'set', HOST_IF, 'up');
  dir = mkdtempSync(join(tmpdir(), 'lvsd-tp-'));
  procName = `lvtpsleep${tag}`;
  copyFileSync('/bin/sleep', join(dir, procName));
});

after(async () => {
  for (const stop of running.splice(0)) await stop().catch(() => undefined);
  for (const a of [['link', 'del', HOST_IF], ['netns', 'del', NS]]) {
    try {
      execFileSync('ip', a, { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const instance = (iface: string, priority: number): VrrpOptions['instances'][number] => ({ name: 'VI_1', interface: iface, vrid: 61, version: 3, advertIntervalMs: 100, priority, vips: [`${VIP}/24`] });

/** The backup in the namespace: what priority the master advertises. */
async function observer(): Promise<LvsdNode> {
  return own(await startLvsdNode(ns, { instances: [instance('eth0', 50)], garp: { masterDelayMs: 0 } }));
}
const masterPriority = async (o: LvsdNode): Promise<number | null> => (await o.snapshot()).instances[0]?.masterPriority ?? null;
const waitMasterPriority = (o: LvsdNode, p: number, ms = 4000): Promise<true> => waitFor(`master priority ${p}`, async () => (await masterPriority(o)) === p, ms, 20);

/** Starts the tracked process, sees it counted, kills it; returns the priority 400 ms after the kill and how long the drop took. */
async function startAndKill(o: LvsdNode): Promise<{ at400: number | null; dropMs: number }> {
  const p = spawn(join(dir, procName), ['1000'], { stdio: 'ignore' });
  try {
    await waitMasterPriority(o, 110);
  } finally {
    p.kill('SIGKILL');
  }
  const killed = Date.now();
  await sleep(400);
  const at400 = await masterPriority(o);
  await waitMasterPriority(o, 100);
  return { at400, dropMs: Date.now() - killed };
}

test('track_process weight 10, terminate_delay 1: keepalived and lvsd both add the weight while the process runs and keep it through the delay after it exits', { timeout: 60_000 }, async (t) => {
  const o = await observer();
  await o.waitState('VI_1', 'MASTER', 5000);

  const kConf = keepalivedConf([{ name: 'VI_1', interface: HOST_IF, vrid: 61, version: 3, interval: 0.1, priority: 100, vips: [`${VIP}/24`], extra: ['track_process {', '  TP', '}'] }]);
  const tracker = ['vrrp_track_process TP {', `  process ${procName}`, '  weight 10', '  terminate_delay 1', '}'];
  // keepalived needs the tracker defined before the instance ("track process TP not found, ignoring").
  const k: Keepalived = own(await startKeepalived(host, kConf.replace(/^vrrp_instance/m, `${tracker.join('\n')}\nvrrp_instance`)));
  await waitMasterPriority(o, 100, 6000);
  assert.match(k.log(), /proc_events has confirmed it is configured/);
  const kad = await startAndKill(o).catch((e: unknown) => assert.fail(`${String(e)}; keepalived's log:\n${k.log()}`));
  await k.stop();

  const lvsd = own(
    await startLvsdNode(host, {
      instances: [{ ...instance(HOST_IF, 100), trackProcesses: [{ name: 'TP' }] }],
      processes: { TP: { process: procName, weight: 10, terminateDelayMs: 1000 } },
      garp: { masterDelayMs: 0 },
    }),
  );
  await waitMasterPriority(o, 100, 6000);
  const ours = await startAndKill(o);
  assert.deepEqual(lvsd.lines.filter((l) => l.level === 'error'), []);
  await lvsd.stop();

  t.diagnostic(`exit → priority back to 100: keepalived ${kad.dropMs} ms, lvsd ${ours.dropMs} ms (terminate_delay 1 s, advert 0.1 s)`);
  assert.equal(kad.at400, 110, 'keepalived keeps the weight through terminate_delay');
  assert.equal(ours.at400, 110, 'lvsd keeps the weight through terminate_delay, as keepalived');
  await o.stop();
});

/** What `ip -j addr` shows of the addresses that are not the namespace's own, keyed by address. */
async function addrView(): Promise<Record<string, Record<string, unknown>>> {
  const { stdout } = await ns.exec('ip', ['-j', 'addr', 'show', 'dev', 'eth0']);
  const out: Record<string, Record<string, unknown>> = {};
  for (const l of JSON.parse(stdout) as { addr_info: Record<string, unknown>[] }[]) {
    for (const a of l.addr_info) {
      const local = String(a.local);
      if (local === '10.79.0.2' || local === 'fd79::2' || local.startsWith('fe80:')) continue;
      const lft = Number(a.preferred_life_time);
      out[local] = {
        prefixlen: a.prefixlen,
        peer: a.address ?? null,
        broadcast: a.broadcast ?? null,
        label: a.label ?? null,
        scope: a.scope,
        nodad: a.nodad === true,
        home: a.home === true,
        noprefixroute: a.noprefixroute === true,
        // A finite lifetime counts down: its kind is what compares.
        preferred: lft === 4294967295 ? 'forever' : lft === 0 ? 0 : 'finite',
      };
    }
  }
  return out;
}

test('virtual_ipaddress options: lvsd sets peer, brd, label, -nodad, home, noprefixroute and preferred_lft as keepalived 2.2.7 does (ip -j addr, as master)', { timeout: 60_000 }, async () => {
  const lines: [string, VipOptions][] = [
    ['10.79.0.101 peer 10.79.0.201 noprefixroute', { address: '10.79.0.101/32', peer: '10.79.0.201', noPrefixRoute: true }],
    ['10.79.0.102/24 brd 10.79.0.7 label eth0:v', { address: '10.79.0.102/24', broadcast: '10.79.0.7', label: 'eth0:v' }],
    ['fd79::100/64 -nodad home noprefixroute', { address: 'fd79::100/64', dad: true, home: true, noPrefixRoute: true }],
    ['fd79::101/128', { address: 'fd79::101/128' }],
    ['fd79::102/128 preferred_lft forever', { address: 'fd79::102/128', preferredLft: 'forever' }],
    ['fd79::103/64 preferred_lft 60', { address: 'fd79::103/64', preferredLft: 60 }],
  ];
  const k = own(await startKeepalived(ns, keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 62, version: 3, interval: 0.1, priority: 100, vips: [`${VIP}/24`], excludedVips: lines.map(([l]) => l) }])));
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const want = await waitFor('keepalived added every address', async () => {
    const v = await addrView();
    return Object.keys(v).length === lines.length + 1 ? v : null;
  }, 3000);
  await k.stop();
  // keepalived 2.2.7 removes every address but the one with a peer, which it leaves behind (measured; lvsd
  // removes it, asserted below): clear it by hand.
  await waitFor('keepalived removed them', async () => Object.keys(await addrView()).join() === '10.79.0.101', 3000).catch(async (e: unknown) => assert.fail(`${String(e)}: ${JSON.stringify(await addrView())}`));
  await ns.exec('ip', ['addr', 'del', '10.79.0.101', 'peer', '10.79.0.201', 'dev', 'eth0']);

  const l = own(await startLvsdNode(ns, { instances: [{ ...instance('eth0', 100), vrid: 62, excludedVips: lines.map(([, o]) => o) }], garp: { masterDelayMs: 0 } }));
  await l.waitState('VI_1', 'MASTER', 5000);
  const got = await waitFor('lvsd added every address', async () => {
    const v = await addrView();
    return Object.keys(v).length === lines.length + 1 ? v : null;
  }, 3000);
  assert.deepEqual(got, want);
  // What keepalived did, spelled out (so a change on either side shows which).
  assert.deepEqual(got['10.79.0.101'], { prefixlen: 32, peer: '10.79.0.201', broadcast: null, label: 'eth0', scope: 'global', nodad: false, home: false, noprefixroute: true, preferred: 'forever' });
  assert.equal(got['fd79::100']?.nodad, false);
  assert.equal(got['fd79::101']?.preferred, 0);
  await l.stop();
  assert.deepEqual(await addrView(), {}, 'lvsd released them all (the peer address too)');
});

// keepalived.conf(5): "if the configured src_ip doesn't exist or is removed put the instance into fault state".
// keepalived 2.2.7 was measured here not to (it stays MASTER with the address gone, and starts without it):
// lvsd does what the man page says; docs/vrrp.md records the difference.
test('track_src_ip: the configured source address removed → FAULT, back → the instance runs again', { timeout: 60_000 }, async () => {
  const SRC = '10.79.0.12';
  await ns.exec('ip', ['addr', 'add', `${SRC}/24`, 'dev', 'eth0']);
  const l = own(await startLvsdNode(ns, { instances: [{ ...instance('eth0', 100), vrid: 63, unicastSrcIp: SRC, trackSrcIp: true }], garp: { masterDelayMs: 0 } }));
  await l.waitState('VI_1', 'MASTER', 5000);
  const since = performance.timeOrigin + performance.now();
  await ns.exec('ip', ['addr', 'del', `${SRC}/24`, 'dev', 'eth0']);
  await l.waitState('VI_1', 'FAULT', 3000, since);
  assert.deepEqual((await l.snapshot()).instances[0]?.faultReasons, [`source address ${SRC} not on eth0 (track_src_ip)`]);
  await ns.exec('ip', ['addr', 'add', `${SRC}/24`, 'dev', 'eth0']);
  await l.waitState('VI_1', 'MASTER', 5000, since);
  await l.stop();
});
