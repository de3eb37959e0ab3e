// URLs the router refuses before any route runs still get lvsd's error shape, and never the path quoted back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from '../support/api-harness.js';

test('an over-long path parameter is 414 and a bad percent-encoding 400, in lvsd\'s shape, without echoing the path', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const admin = await h.as('admin');
  const name = `x${'\u001b[31m'.repeat(3)}${'a'.repeat(300)}`;
  const long = await h.call(admin, 'DELETE', `/api/v1/users/${encodeURIComponent(name)}`);
  assert.equal(long.statusCode, 414);
  assert.deepEqual(long.json(), { statusCode: 414, error: 'URI Too Long', message: 'a path parameter is longer than 100 characters' });
  const bad = await h.call(admin, 'DELETE', '/api/v1/users/%E0%A4%A');
  assert.equal(bad.statusCode, 400);
  const body = bad.json<{ statusCode: number; error: string; message: string }>();
  assert.equal(body.error, 'Bad Request');
  assert.doesNotMatch(bad.body, /%E0/i);
});
