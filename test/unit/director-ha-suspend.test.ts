// ha_suspend on the director: haSuspended() decides from the VRRP roles which services' checks are
// suspended, and a real Director (fake VRRP engine, real TCP checks on loopback) follows transitions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { haSuspended } from '../../daemon/director/ha-suspend.js';
import type { VrrpState } from '../../daemon/vrrp/index.js';
import { loadConfig, startFakeDirector } from '../support/director-fakes.js';

const CONFIG = `
dataplane: nftables
api: { listen: 127.0.0.1:9180, socket: /tmp/none.sock }
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, priority: 150, virtualIpaddresses: [192.0.2.10/24] }
    - { name: VI_6, interface: eth0, virtualRouterId: 52, priority: 150, virtualIpaddresses: [2001:db8::10/64] }
virtualServers:
  - { name: web, address: 192.0.2.10, port: 80, method: nat, haSuspend: true, realServers: [{ address: 10.0.1.11, port: 80 }] }
  - { name: web6, address: "2001:db8:0::10", port: 80, method: nat, haSuspend: true, realServers: [{ address: "2001:db8:1::11", port: 80 }] }
  - { name: plain, address: 192.0.2.10, port: 443, method: nat, realServers: [{ address: 10.0.1.11, port: 443 }] }
  - { name: static, address: 198.51.100.1, port: 80, method: nat, haSuspend: true, realServers: [{ address: 10.0.1.11, port: 80 }] }
`;

test('haSuspended: suspended unless an instance carrying the address is MASTER; only haSuspend services; an address no instance carries runs', () => {
  const c = loadConfig(CONFIG);
  const ids = Object.fromEntries(c.virtualServers.map((v) => [v.name, v.id]));
  const roles = (r: Record<string, VrrpState>): ReadonlyMap<string, VrrpState> => new Map(Object.entries(r));
  const at = (m: Map<string, boolean>): Record<string, boolean | undefined> =>
    Object.fromEntries(['web', 'web6', 'plain', 'static'].map((n) => [n, m.get(ids[n] ?? '')]));
  assert.deepEqual(at(haSuspended(c, roles({}))), { web: true, web6: true, plain: undefined, static: false });
  assert.deepEqual(at(haSuspended(c, roles({ VI_1: 'BACKUP', VI_6: 'FAULT' }))), { web: true, web6: true, plain: undefined, static: false });
  // The IPv6 address is written differently in the VIP and the virtual server: compared as addresses.
  assert.deepEqual(at(haSuspended(c, roles({ VI_1: 'MASTER', VI_6: 'MASTER' }))), { web: false, web6: false, plain: undefined, static: false });
});

test('director: ha_suspend runs the checks only while the VIP is MASTER here, and keeps the table meanwhile', async () => {
  const hits: number[] = [];
  const server: Server = createServer((s) => { hits.push(Date.now()); s.destroy(); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  if (a === null || typeof a === 'string') throw new Error('no port');
  const t = await startFakeDirector(`
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, priority: 150, virtualIpaddresses: [192.0.2.10/24] }
virtualServers:
  - name: web
    address: 192.0.2.10
    port: 80
    haSuspend: true
    healthCheck: { type: tcp, interval: 100ms, timeout: 500ms }
    realServers: [{ address: 127.0.0.1, port: ${a.port} }]
`);
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    // No transition yet: the VIP is not held, so no check reaches the server in ten intervals.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(hits.length, 0, 'checked while the address was not held');
    assert.equal(t.d.snapshot().virtualServices[0]?.checksSuspended, true, 'the snapshot (GET /api/v1/status, lvsd status) shows the suspension');
    t.engine().transition('VI_1', 'BACKUP', 'MASTER');
    await until('checks after MASTER', () => hits.length >= 3);
    assert.equal(t.d.snapshot().virtualServices[0]?.checksSuspended, false);
    t.engine().transition('VI_1', 'MASTER', 'BACKUP');
    await new Promise((r) => setTimeout(r, 300)); // a check in flight may land
    const n = hits.length;
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(hits.length, n, 'checked after BACKUP');
    assert.equal(t.d.snapshot().virtualServices[0]?.checksSuspended, true);
    assert.equal(t.d.snapshot().virtualServices[0]?.realServers[0]?.health.status, 'up', 'the real server keeps its state while suspended');
  } finally {
    await t.cleanup();
    await new Promise((r) => server.close(r));
  }
});
