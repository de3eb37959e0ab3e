import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SCHEDULERS, UnsupportedByDataplane } from '../../daemon/dataplane/types.js';

test('every kernel scheduler is listed once', () => {
  assert.equal(new Set(SCHEDULERS).size, 14);
});

test('UnsupportedByDataplane names the backend and the object', () => {
  const e = new UnsupportedByDataplane('nftables', 'tcp:10.0.0.1:80 → 10.0.1.1:80', 'DR forwarding needs IPVS');
  assert.match(e.message, /^nftables: tcp:10\.0\.0\.1:80 → 10\.0\.1\.1:80: DR forwarding needs IPVS$/);
});
