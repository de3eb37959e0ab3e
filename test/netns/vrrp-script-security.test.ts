// script_user and enable_script_security, measured on Debian's keepalived 2.2.7 first and then on lvsd:
// who a notify hook runs as, and a root script in a directory everyone may write is refused with script
// security (a track script so refused is disabled) and run with a warning without it.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepalivedConf, startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VrrpOptions } from '../../daemon/vrrp/options.js';

let dir: string;

const suite = labSuite('vrrpsec', 1, ['ip', 'keepalived']);
const { host, own, stopAll } = suite;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lvsd-sec-'));
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'safe'), { mode: 0o755 });
  mkdirSync(join(dir, 'open'));
  chmodSync(join(dir, 'open'), 0o777); // no sticky bit: anyone may replace the script
  mkdirSync(join(dir, 'out'));
  chmodSync(join(dir, 'out'), 0o1777);
  // Each run appends "uid" to out/<name>.
  for (const d of ['safe', 'open']) {
    for (const n of ['k', 'l']) {
      const p = join(dir, d, `${n}.sh`);
      writeFileSync(p, `#!/bin/sh\nid -u >> ${dir}/out/${d}-${n}\n`);
      chmodSync(p, 0o755);
    }
  }
});

const runs = (name: string): string[] => (existsSync(join(dir, 'out', name)) ? readFileSync(join(dir, 'out', name), 'utf8').trim().split('\n') : []);

async function kad(globals: string[], extra: string[]): Promise<Keepalived> {
  return own(await startKeepalived(host(1), keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, version: 3, interval: 0.1, vips: [`${VIP4}/24`], extra }], 'kad', globals)));
}
async function lvsd(extra: Partial<VrrpOptions>, notifyMaster: string, trackScript?: string): Promise<LvsdNode> {
  const o = lvsdOptions({ priority: 150, notify: { master: notifyMaster }, ...(trackScript !== undefined ? { trackScripts: [{ name: 'chk', weight: -100 }] } : {}) }, extra);
  if (trackScript !== undefined) o.scripts = { chk: { command: trackScript, intervalMs: 200 } };
  return own(await startLvsdNode(host(1), o));
}
async function cleanup(): Promise<void> {
  await stopAll();
  await host(1).sh(`ip addr del ${VIP4}/24 dev eth0 2>/dev/null; true`);
}

test('script_user nobody: keepalived runs notify_master as nobody, and lvsd with vrrp.scriptUser does too; a hook\'s own user wins', { timeout: 60_000 }, async () => {
  const k = await kad(['script_user nobody'], [`notify_master ${dir}/safe/k.sh`]);
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  await waitFor('keepalived ran notify_master', () => runs('safe-k').length > 0, 5000);
  await cleanup();
  const l = await lvsd({ scriptUser: 'nobody' }, `${dir}/safe/l.sh`);
  await l.waitState('VI_1', 'MASTER', 5000);
  await waitFor('lvsd ran notify master', () => runs('safe-l').length > 0, 5000);
  assert.deepEqual(runs('safe-k'), ['65534'], 'keepalived, the reference');
  assert.deepEqual(runs('safe-l'), ['65534']);
  await cleanup();
  // notify_master "/x" root: the hook's own user over script_user.
  const l2 = await startLvsdNode(host(1), lvsdOptions({ priority: 150, notify: { master: `${dir}/safe/l.sh`, users: { master: 'root' } } }, { scriptUser: 'nobody' }));
  own(l2);
  await l2.waitState('VI_1', 'MASTER', 5000);
  await waitFor('lvsd ran it as root', () => runs('safe-l').length > 1, 5000);
  assert.deepEqual(runs('safe-l'), ['65534', '0']);
  await cleanup();
});

test('enable_script_security: a root script in a world-writable directory is not run by keepalived nor by lvsd (its track script disabled); without it both run it and warn', { timeout: 90_000 }, async () => {
  const k = await kad(['script_user root', 'enable_script_security'], [`notify_master ${dir}/open/k.sh`]);
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  await k.waitForLog(/Unsafe permissions found for script '[^']*open\/k\.sh' - disabling/, 3000);
  const l = await lvsd({ scriptUser: 'root', scriptSecurity: true }, `${dir}/open/l.sh`, `${dir}/open/l.sh`);
  await sleep(1000);
  await cleanup();
  assert.deepEqual(runs('open-k'), [], 'keepalived (the reference) refused it');
  assert.deepEqual(runs('open-l'), [], 'lvsd refused both the notify hook and the track script');
  assert.ok(l.lines.some((x) => typeof x.msg === 'string' && /^track script chk disabled: unsafe permissions: .*open is writable by everyone/.test(x.msg)), l.output());
  assert.ok(l.lines.some((x) => x.msg === 'notify hook failed' && typeof x.err === 'string' && x.err.includes('not run: unsafe permissions')), l.output());
  assert.equal(l.state('VI_1'), 'MASTER', 'a disabled track script does not move the instance');

  const k2 = await kad(['script_user root'], [`notify_master ${dir}/open/k.sh`]);
  await k2.waitForLog(/Entering MASTER STATE/, 5000);
  await waitFor('keepalived ran it', () => runs('open-k').length > 0, 5000);
  assert.match(k2.log(), /Unsafe permissions found for script '[^']*open\/k\.sh'\./);
  await cleanup();
  const l2 = await lvsd({ scriptUser: 'root' }, `${dir}/open/l.sh`);
  await l2.waitState('VI_1', 'MASTER', 5000);
  await waitFor('lvsd ran it', () => runs('open-l').length > 0, 5000);
  assert.ok(l2.lines.some((x) => typeof x.msg === 'string' && x.msg.startsWith('SECURITY VIOLATION')), l2.output());
  await cleanup();
});
