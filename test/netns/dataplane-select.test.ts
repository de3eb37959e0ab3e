// The real probes on this host: the generic-netlink question for IPVS, and a probe table for nftables
// inside a fresh namespace (created and deleted in one transaction: nothing may be left behind).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { Topology } from '../support/netns.js';
import { probeIpvs, probeNftables, selectDataplane, defaultProbes } from '../../daemon/dataplane/select.js';

test('probes answer for this host, and auto picks accordingly', async () => {
  requireRoot();
  requireCommands('ip', 'nft');
  const topo = await Topology.create('select');
  after(() => {
    topo.destroy();
  });
  const host = await topo.addHost({ name: 'h' });
  const ipvs = await probeIpvs();
  // Independent witness: after the probe (which lets the kernel autoload ip_vs), /proc/net/ip_vs exists
  // exactly when the kernel has IPVS.
  assert.equal(ipvs.ok, existsSync('/proc/net/ip_vs'), ipvs.detail);
  const nft = await probeNftables({ netns: host.name });
  assert.ok(nft.ok, nft.detail);
  const { stdout } = await host.exec('nft', ['list', 'tables']);
  assert.equal(stdout.trim(), '', 'the probe table is gone');
  const missing = await probeNftables({ nft: '/nonexistent/nft' });
  assert.deepEqual(missing, { ok: false, detail: 'nftables unusable: /nonexistent/nft is not installed' });
  const chosen = await selectDataplane('auto', undefined, defaultProbes({ netns: host.name }));
  assert.equal(chosen.kind, ipvs.ok ? 'ipvs' : 'nftables', chosen.reason);
});
