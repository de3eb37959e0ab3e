// KernelView (daemon/dataplane/ipvs/view.ts): a service kept as its desired spec reads as heldAs would make it,
// once asked for, and what is set or deleted replaces it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KernelView } from '../../daemon/dataplane/ipvs/view.js';
import { heldAs } from '../../daemon/dataplane/ipvs/observe.js';
import type { ServiceSpec } from '../../daemon/dataplane/types.js';

const spec = (n: number, weight = 1): ServiceSpec => ({
  id: `tcp:10.0.0.${n}:80`, family: 4, protocol: 'tcp', address: `10.0.0.${n}`, port: 80, scheduler: 'wrr',
  realServers: [{ id: `10.1.0.${n}:80`, address: `10.1.0.${n}`, port: 80, weight, method: 'nat' }],
});

test('a held service is made observed when asked for, once, and set/delete replace it', () => {
  const decoded = heldAs(spec(1));
  const view = new KernelView([decoded], [spec(2), spec(1, 9)]);
  assert.equal(view.size, 2, 'a held spec never shadows a decoded service of the same id');
  assert.equal(view.get('tcp:10.0.0.1:80'), decoded);
  const made = view.get('tcp:10.0.0.2:80');
  assert.deepEqual(made, heldAs(spec(2)));
  assert.equal(made.realServers[0]?.activeConns, 0);
  assert.equal(view.get('tcp:10.0.0.2:80'), made, 'made once: a drain refresh written into it stays');
  assert.equal(view.get('tcp:10.0.0.3:80'), undefined);
  const view2 = new KernelView([], [spec(4), spec(5)]);
  view2.set(heldAs(spec(4, 3)));
  assert.equal(view2.get('tcp:10.0.0.4:80')?.realServers[0]?.weight, 3);
  view2.delete('tcp:10.0.0.5:80');
  assert.equal(view2.get('tcp:10.0.0.5:80'), undefined);
  assert.equal(view2.size, 1);
});
