// emptiesDirector: a reload that would leave no VRRP instance and no virtual server is named, so the
// reload path can refuse it (issue 17, item 7). Configs come from the real loader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { emptiesDirector } from '../../daemon/config/empty-reload.js';
import type { Config } from '../../daemon/config/types.js';

function cfg(text: string, file = 'lvsd.yaml'): Config {
  const r = loadConfigText(text, file);
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

const VRRP = `
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, virtualIpaddresses: [192.0.2.10/24] }
`;
const VS = `
virtualServers:
  - { address: 192.0.2.10, port: 80, realServers: [{ address: 10.0.1.11 }, { address: 10.0.1.12 }] }
`;
const BOTH = VRRP + VS;
const NOTHING = ['{}\n', 'node: { name: lvs1 }\n', 'api: { listen: "127.0.0.1:9180" }\ndataplane: userspace\n'];

test('a reload from a working director to no VRRP instance and no virtual server is named, with what would go', () => {
  for (const text of NOTHING) {
    const why = emptiesDirector(cfg(BOTH), cfg(text, '/etc/lvsd/lvsd.yaml'));
    assert.ok(why !== null, text);
    assert.match(why, /^\/etc\/lvsd\/lvsd\.yaml has no VRRP instance and no virtual server, while the running config has 1 VRRP instance and 1 virtual server: /);
    assert.match(why, /release every VIP and empty the virtual server table/);
  }
  assert.match(emptiesDirector(cfg(VRRP), cfg('{}\n')) ?? '', /has 1 VRRP instance and 0 virtual servers/);
  assert.match(emptiesDirector(cfg(VS), cfg('{}\n')) ?? '', /has 0 VRRP instances and 1 virtual server/);
});

test('anything left, or nothing before: not an emptying reload', () => {
  assert.equal(emptiesDirector(cfg(BOTH), cfg(VRRP)), null, 'VRRP only: a pair that just floats VIPs');
  assert.equal(emptiesDirector(cfg(BOTH), cfg(VS)), null, 'virtual servers only');
  assert.equal(emptiesDirector(cfg(BOTH), cfg(BOTH)), null);
  assert.equal(emptiesDirector(cfg('{}\n'), cfg('{}\n')), null, 'already empty: nothing to lose');
  assert.equal(emptiesDirector(cfg('{}\n'), cfg(BOTH)), null);
});
