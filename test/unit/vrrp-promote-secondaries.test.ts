// promote_secondaries: the engine's bookkeeping (on for the interfaces that want it, off again only where it
// turned it on) and the importer (carried with its source line; dropped on a VMAC/ipvlan instance, as
// keepalived 2.2.7 drops it there). The kernel side is test/netns/vrrp-promote-secondaries.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromoteSecondaries, type PromoteIo } from '../../daemon/vrrp/promote-secondaries.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { importText } from './keepalived-memfs.js';

function io(conf: Record<string, number>): PromoteIo & { writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    read: (ifname) => conf[ifname] ?? 0,
    write: (ifname, v) => {
      conf[ifname] = v;
      writes.push(`${ifname}=${v}`);
    },
  };
}

const opts = (insts: { name: string; iface: string; promote?: boolean; vmac?: boolean }[]) =>
  normalizeOptions({
    instances: insts.map((i, n) => ({ name: i.name, interface: i.iface, vrid: 51 + n, priority: 100, vips: [`10.0.${n}.100/24`], ...(i.promote === true ? { promoteSecondaries: true } : {}), ...(i.vmac === true ? { vmac: {} } : {}) })),
  });

test('PromoteSecondaries: on for each interface an instance wants it on, once; off when none wants it any more, only where it turned it on', () => {
  const conf: Record<string, number> = { eth1: 1 };
  const x = io(conf);
  const warns: string[] = [];
  const p = new PromoteSecondaries(x, (m) => warns.push(m));
  p.sync(opts([{ name: 'A', iface: 'eth0', promote: true }, { name: 'B', iface: 'eth0', promote: true }, { name: 'C', iface: 'eth1', promote: true }, { name: 'D', iface: 'eth2' }, { name: 'E', iface: 'eth3', promote: true, vmac: true }]));
  assert.deepEqual(x.writes, ['eth0=1'], 'eth1 was on already; eth2 not asked; a VMAC instance has it on its macvlan');
  p.sync(opts([{ name: 'A', iface: 'eth0', promote: true }, { name: 'C', iface: 'eth1' }]));
  assert.deepEqual(x.writes, ['eth0=1'], 'eth0 still wanted by A; eth1 not ours to turn off');
  p.sync(opts([{ name: 'A', iface: 'eth0' }]));
  assert.deepEqual(x.writes, ['eth0=1', 'eth0=0']);
  p.sync(null);
  assert.deepEqual(x.writes, ['eth0=1', 'eth0=0']);
  assert.deepEqual(conf, { eth0: 0, eth1: 1 });
  const gone = new PromoteSecondaries({ read: () => 0, write: () => { throw new Error('ENOENT'); } }, (m) => warns.push(m));
  gone.sync(opts([{ name: 'A', iface: 'eth9', promote: true }]));
  assert.match(warns[0] ?? '', /cannot set promote_secondaries on eth9: ENOENT/);
});

const VI = (body: string): string => `vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n${body}\n}\n`;

test('importer: promote_secondaries → promoteSecondaries with its source line, and it loads; on a use_vmac / use_ipvlan instance dropped with a note, as keepalived ignores it there', () => {
  const r = importText(VI(' promote_secondaries'));
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.config.vrrp?.instances?.[0]?.promoteSecondaries, true);
  assert.match(r.yaml, /promoteSecondaries: true # from \/etc\/keepalived\/keepalived\.conf:7/);
  const loaded = loadConfigText(r.yaml, 'lvsd.yaml');
  assert.ok(loaded.ok, loaded.ok ? '' : JSON.stringify(loaded.errors));
  assert.equal(vrrpOptions(loaded.config).instances[0]?.promoteSecondaries, true);
  for (const link of [' use_vmac', ' use_ipvlan vrrp.51 10.0.0.9/24']) {
    const v = importText(VI(`${link}\n promote_secondaries`));
    assert.deepEqual(v.diagnostics, [], link);
    assert.equal(v.config.vrrp?.instances?.[0]?.promoteSecondaries, undefined, link);
    assert.match(v.yaml, /promote_secondaries \(\/etc\/keepalived\/keepalived\.conf:8\) dropped: keepalived ignores it on a VMAC or ipvlan instance/, link);
  }
});
