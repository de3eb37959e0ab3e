// `dataplane: auto` and explicit choices, over injected probes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectDataplane, DataplaneUnavailable, type DataplaneProbes } from '../../daemon/dataplane/select.js';

function probes(ipvs: boolean, nft: boolean, calls: string[] = []): DataplaneProbes {
  return {
    ipvs: () => {
      calls.push('ipvs');
      return Promise.resolve({ ok: ipvs, detail: ipvs ? 'IPVS here' : 'no IPVS' });
    },
    nftables: () => {
      calls.push('nftables');
      return Promise.resolve({ ok: nft, detail: nft ? 'nft here' : 'no nft' });
    },
  };
}

test('auto: ipvs first, then nftables, then userspace, with every reason in the words', async () => {
  const calls: string[] = [];
  assert.deepEqual(await selectDataplane('auto', undefined, probes(true, true, calls)), { kind: 'ipvs', reason: 'auto: IPVS here' });
  assert.deepEqual(calls, ['ipvs'], 'nftables is not probed when IPVS is there');
  assert.deepEqual(await selectDataplane('auto', undefined, probes(false, true)), { kind: 'nftables', reason: 'auto: no IPVS; nft here' });
  const u = await selectDataplane('auto', undefined, probes(false, false));
  assert.equal(u.kind, 'userspace');
  assert.match(u.reason, /no IPVS; no nft/);
});

test('explicit choices are checked; userspace needs no probe', async () => {
  const calls: string[] = [];
  assert.equal((await selectDataplane('userspace', undefined, probes(false, false, calls))).kind, 'userspace');
  assert.deepEqual(calls, []);
  assert.equal((await selectDataplane('nftables', undefined, probes(false, true))).kind, 'nftables');
  await assert.rejects(selectDataplane('ipvs', undefined, probes(false, true)), (e: unknown) => e instanceof DataplaneUnavailable && /ipvs.*no IPVS/.test(e.message));
});
