// The keepalived corpus as a VRRP pair: for every corpus file, Debian's keepalived runs the ORIGINAL file
// on one node and `lvsd run` runs its import on the peer node (test/support/keepalived-corpus.ts: vrrpPair —
// the same interface names, the unicast addresses the file names, lvsd as the lower-priority second
// director). They must behave like a keepalived pair: keepalived (higher) is master and holds every VIP;
// on its graceful stop lvsd takes every instance; a sync group leaves together when one of its instances
// fails; keepalived back takes over again where the file preempts, and does not where it says nopreempt.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { removeStaleNamespaces, Topology, type Netns } from '../support/netns.js';
import { startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startRun, type LvsdRun } from '../support/lvsd-run.js';
import { sleep, waitFor } from '../support/vrrp-lab.js';
import { CORPUS_DIR, corpusFiles, importCorpusFile, vipsOf, vrrpPair, withoutSyncDaemon, type Vip } from '../support/keepalived-corpus.js';
import { localRequest, STATUS_ROUTE } from '../../daemon/api/local-client.js';
import type { DirectorSnapshot } from '../../daemon/director/snapshot.js';

const tmp = mkdtempSync(join(tmpdir(), 'lvsd-corpus-vrrp-'));
before(() => {
  requireRoot();
  requireCommands('ip', 'keepalived');
  removeStaleNamespaces();
});
after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

const ms = (d: string | undefined, dflt: number): number => {
  if (d === undefined) return dflt;
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(d);
  return m === null ? dflt : Number(m[1]) * (m[2] === 's' ? 1000 : 1);
};

/** The ORIGINAL file, except lvs_sync_daemon where this kernel has no IPVS (see withoutSyncDaemon). */
function keepalivedConfig(file: string, dir: string): { file: string } {
  const path = join(CORPUS_DIR, file);
  if (existsSync('/proc/net/ip_vs')) return { file: path };
  const r = withoutSyncDaemon(readFileSync(path, 'utf8'));
  if (r.lines.length === 0) return { file: path };
  const copy = join(dir, 'keepalived.conf');
  writeFileSync(copy, r.text);
  return { file: copy };
}

interface Pair {
  ka: Netns;
  lv: Netns;
  topo: Topology;
  socket: string;
  lvsdConfig: string;
}

async function buildPair(file: string, idx: number): Promise<Pair & { plan: ReturnType<typeof vrrpPair> }> {
  const dir = join(tmp, String(idx));
  const place = { listen: '127.0.0.1:9180', socket: join(dir, 'lvsd.sock'), stateFile: join(dir, 'state.json') };
  const plan = vrrpPair(importCorpusFile(file).config, { priorityDelta: -10, place });
  const topo = await Topology.create(`kc${idx}`);
  try {
    const ka = await topo.addHost({ name: 'ka' });
    const lv = await topo.addHost({ name: 'lv' });
    // addHost gives eth0 on "lan"; every other interface of the file gets a segment named after it.
    for (const ifname of plan.interfaces) {
      if (ifname !== 'eth0') {
        await topo.link('ka', ifname, ifname);
        await topo.link('lv', ifname, ifname);
      }
      for (const a of plan.keepalivedAddresses[ifname] ?? []) await ka.addAddress(ifname, a);
      for (const a of plan.lvsdAddresses[ifname] ?? []) await lv.addAddress(ifname, a);
    }
    mkdirSync(dir, { recursive: true });
    const lvsdConfig = join(dir, 'lvsd.yaml');
    writeFileSync(lvsdConfig, YAML.stringify(plan.lvsdConfig));
    return { ka, lv, topo, socket: place.socket, lvsdConfig, plan };
  } catch (e) {
    topo.destroy();
    throw e;
  }
}

async function holders(p: Pair, v: Vip): Promise<string[]> {
  const out: string[] = [];
  for (const [name, ns] of [['keepalived', p.ka], ['lvsd', p.lv]] as const) {
    if ((await ns.addresses(v.ifname).catch(() => [])).some((a) => a.split('/')[0] === v.address)) out.push(name);
  }
  return out;
}

/** Every VIP in `vips` is on `who` only (who = null: on neither node). */
async function vipsOn(p: Pair, vips: Vip[], who: 'keepalived' | 'lvsd' | null, timeoutMs: number): Promise<void> {
  await waitFor(`${vips.map((v) => v.address).join(', ')} only on ${who ?? 'neither node'}`, async () => {
    for (const v of vips) {
      const h = await holders(p, v);
      if (h.length !== (who === null ? 0 : 1) || (who !== null && h[0] !== who)) return false;
    }
    return true;
  }, timeoutMs, 100);
}

async function lvsdStates(p: Pair): Promise<Record<string, string>> {
  const snap = (await localRequest<DirectorSnapshot>(p.socket, 'GET', STATUS_ROUTE)).body;
  return Object.fromEntries(snap.vrrp.map((i) => [i.name, i.state]));
}

async function lvsdAll(p: Pair, names: string[], state: string, timeoutMs: number): Promise<void> {
  await waitFor(`lvsd: ${names.join(', ')} ${state}`, async () => {
    const s = await lvsdStates(p);
    return names.every((n) => s[n] === state);
  }, timeoutMs, 200);
}

describe('keepalived corpus as a VRRP pair: keepalived (original file) and lvsd (its import) on peer nodes', { concurrency: 2 }, () => {
  for (const [idx, file] of corpusFiles().entries()) {
    test(file, { timeout: 180_000 }, async (t) => {
      const { config } = importCorpusFile(file);
      const instances = config.vrrp?.instances ?? [];
      assert.ok(instances.length > 0, `${file} has vrrp_instance blocks`);
      const names = instances.map((i) => i.name);
      const vips = instances.flatMap(vipsOf);
      const advert = Math.max(...instances.map((i) => ms(i.advertInterval, 1000)));
      // Master_Down_Interval is ~3 adverts; keepalived in BACKUP waits that long before it claims the VIPs.
      const down = 3 * advert + 1000;
      const p = await buildPair(file, idx);
      let k: Keepalived | null = null;
      let l: LvsdRun | null = null;
      try {
        // 1. keepalived alone: it ends up master of every instance.
        k = await startKeepalived(p.ka, keepalivedConfig(file, join(tmp, String(idx))));
        await vipsOn(p, vips, 'keepalived', down + 10_000);

        // 2. lvsd joins with the lower priority: it stays backup, the VIPs stay where they are.
        l = startRun(['--config', p.lvsdConfig], ['ip', 'netns', 'exec', p.lv.name]);
        await l.waitFor(/^running$/, 30_000);
        await lvsdAll(p, names, 'BACKUP', down + 5000);
        await sleep(down);
        await vipsOn(p, vips, 'keepalived', 1000);
        assert.deepEqual(Object.values(await lvsdStates(p)), names.map(() => 'BACKUP'));

        // 3. keepalived stops gracefully (priority 0): lvsd takes every instance.
        await k.stop();
        k = null;
        await vipsOn(p, vips, 'lvsd', down + 5000);
        await lvsdAll(p, names, 'MASTER', 2000);

        // 4. A sync group leaves together: one of its instances loses its interface on lvsd's node.
        for (const g of config.vrrp?.syncGroups ?? []) {
          const failing = instances.find((i) => i.name === g.instances.at(-1));
          assert.ok(failing !== undefined);
          const groupVips = instances.filter((i) => g.instances.includes(i.name)).flatMap(vipsOf);
          await p.topo.setLink('lv', failing.interface, false);
          await vipsOn(p, groupVips, null, down + 5000);
          const s = await lvsdStates(p);
          assert.deepEqual(g.instances.filter((n) => s[n] === 'MASTER'), [], `sync group ${g.name} left master together: ${JSON.stringify(s)}`);
          await p.topo.setLink('lv', failing.interface, true);
          await vipsOn(p, groupVips, 'lvsd', down + 5000);
          t.diagnostic(`sync group ${g.name}: ${failing.interface} down on lvsd's node took all of ${g.instances.join(', ')} out of MASTER, and back`);
        }

        // 5. keepalived comes back (higher priority): it preempts unless the file says nopreempt.
        k = await startKeepalived(p.ka, keepalivedConfig(file, join(tmp, String(idx))));
        const preempting = instances.filter((i) => i.preempt !== false);
        const delay = Math.max(0, ...instances.map((i) => ms(i.preemptDelay, 0)));
        if (preempting.length === instances.length) {
          await vipsOn(p, vips, 'keepalived', down + delay + 10_000);
          await lvsdAll(p, names, 'BACKUP', 3000);
          t.diagnostic('keepalived back with the higher priority preempted lvsd');
        } else {
          assert.deepEqual(preempting, [], `${file}: every instance nopreempt, or none (the test does not mix them)`);
          await sleep(down + 2000);
          await vipsOn(p, vips, 'lvsd', 1000);
          assert.doesNotMatch(k.log(), /Entering MASTER STATE/);
          t.diagnostic('nopreempt: keepalived back with the higher priority left lvsd master');
        }
      } catch (e) {
        // What each side was doing, for the failure report.
        const states = await lvsdStates(p).catch((x: unknown) => String(x));
        const lvsdLog = (l?.lines ?? []).filter((x) => x.level !== 'debug' && !/request/.test(x.msg)).map((x) => `${x.level} ${x.msg}`).slice(-40).join('\n');
        throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- lvsd states ${JSON.stringify(states)}\n--- lvsd log\n${lvsdLog}\n--- keepalived log\n${(k?.log() ?? '').slice(-3000)}`, { cause: e });
      } finally {
        if (l !== null && l.child.exitCode === null) {
          l.child.kill('SIGTERM');
          await Promise.race([l.exit, sleep(10_000)]);
        }
        await k?.kill();
        p.topo.destroy();
      }
    });
  }
});
