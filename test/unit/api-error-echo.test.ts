// An API error quotes the request back (a path parameter, a user name); a bidi or control character in
// it is escaped as \uXXXX in the message, as config errors are (config/errors.ts: echo), so it cannot
// reorder or recolour what the panel or a terminal shows. It used to be sent as it came.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from '../support/api-harness.js';

test('a right-to-left override or an escape in a path parameter or user name is escaped in the error', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const admin = await h.as('admin');
  const svc = await h.call(admin, 'PUT', '/api/v1/services/%E2%80%AEabc%1B%5B31m/override', { drain: true });
  assert.equal(svc.statusCode, 404);
  assert.equal(svc.json<{ message: string }>().message, 'no virtual server "\\u202eabc\\u001b[31m"');
  const user = await h.call(admin, 'POST', '/api/v1/users', { name: '\u202eadmin', password: 'long enough password', role: 'viewer' });
  assert.equal(user.statusCode, 400);
  assert.match(user.json<{ message: string }>().message, /^user name "\\u202eadmin" must be/);
  // plain text is left as it is
  const plain = await h.call(admin, 'PUT', '/api/v1/services/n%C3%A9ant/override', { drain: true });
  assert.equal(plain.json<{ message: string }>().message, 'no virtual server "néant"');
});
