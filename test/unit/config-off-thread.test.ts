// A large config is parsed and validated on a worker thread (parse-off-thread.ts): the answer is the same
// as inline, to the line and column of each error, and the event loop keeps turning while it is checked
// — the order of events shows it (nothing here is timed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { INLINE_BELOW, parseConfigOffThread } from '../../daemon/config/parse-off-thread.js';
import { buildApi } from '../../daemon/api/server.js';
import { startFakeDirector } from '../support/director-fakes.js';

/** A valid config of `services` virtual servers with ten real servers each (~70 bytes a real server). */
function bigConfig(services: number): string {
  const lines = ['virtualServers:'];
  for (let s = 0; s < services; s++) {
    lines.push(`  - name: web${s}`, `    address: 192.0.2.10`, `    port: ${1000 + s}`, '    healthCheck: { type: tcp, interval: 5s }', '    realServers:');
    for (let r = 1; r <= 10; r++) lines.push(`      - { address: 10.${s >> 8}.${s & 255}.${r}, port: 80, weight: ${r} }`);
  }
  return lines.join('\n') + '\n';
}

test('off the thread, the same answer as inline: a valid config, and errors with their line and column', async () => {
  const text = bigConfig(800);
  assert.ok(text.length > INLINE_BELOW * 4, `big enough to go to the worker (${text.length} chars)`);
  const [worker, inline] = [await parseConfigOffThread(text, '/etc/lvsd/lvsd.yaml'), loadConfigText(text, '/etc/lvsd/lvsd.yaml')];
  assert.ok(worker.ok && inline.ok);
  assert.deepStrictEqual(worker, inline);
  const bad = text.replace('port: 1500', 'port: 99999').replace('weight: 7 }', 'weight: -7 }');
  const [wb, ib] = [await parseConfigOffThread(bad, 'x.yaml'), loadConfigText(bad, 'x.yaml')];
  assert.ok(!wb.ok && !ib.ok);
  assert.deepStrictEqual(wb.errors, ib.errors);
  assert.ok(wb.errors.length >= 2 && wb.errors.every((e) => e.line > 1 && e.col > 0), JSON.stringify(wb.errors));
});

test('a director validating a big config keeps its event loop turning; a small one is answered inline', async (t) => {
  const fake = await startFakeDirector('virtualServers: []\n');
  t.after(() => fake.cleanup());
  const text = bigConfig(1200);
  const order: string[] = [];
  const validated = fake.d.validateConfig(text).then((r) => {
    order.push(`validated ${String(r.ok)}`);
  });
  // Without the worker the parse would run before this callback could: 'validated' would come first.
  await new Promise((r) => setImmediate(r));
  order.push('event loop turned');
  await validated;
  assert.deepEqual(order, ['event loop turned', 'validated true']);
  // A small text: parsed inline, so its answer is ready at the next microtask, before any I/O turn.
  const small: string[] = [];
  const quick = fake.d.validateConfig('virtualServers: []\n').then(() => small.push('validated'));
  setImmediate(() => small.push('event loop turned'));
  await quick;
  assert.deepEqual(small, ['validated']);
});

test('through the API: a request sent while a big config is validated is answered before the validate is', async (t) => {
  const fake = await startFakeDirector('virtualServers: []\n');
  t.after(() => fake.cleanup());
  const order: string[] = [];
  let during: Promise<void> | undefined;
  // The director as the API sees it, but the moment the validate route has handed its text on, another
  // request is sent. Parsed inline, the text would be checked before validateConfig returned: 'validated'
  // would come at the next microtask, before that request could be routed and answered.
  const director = new Proxy(fake.d, {
    get(target, key) {
      const v: unknown = Reflect.get(target, key);
      if (key !== 'validateConfig') return typeof v === 'function' ? (v as () => unknown).bind(target) : v;
      return (text: string) => {
        const checked = target.validateConfig(text);
        void checked.then(() => { order.push('validated'); });
        during = app.inject({ method: 'GET', url: '/api/v1/config' }).then((r) => { order.push(`config ${r.statusCode}`); });
        return checked;
      };
    },
  });
  // localAdmin: every caller is admin, so no login is needed (the unix socket's mode).
  const app = await buildApi({ director, store: fake.store, localAdmin: true, webuiDir: null, logger: false });
  t.after(() => app.close());
  await app.ready();
  const r = await app.inject({ method: 'POST', url: '/api/v1/config/validate', payload: { text: bigConfig(1200) } });
  order.push(`validate ${r.statusCode} ${r.json<{ ok: boolean }>().ok ? 'ok' : 'errors'}`);
  assert.ok(during !== undefined, 'the validate route reached the director');
  await during;
  assert.deepEqual(order, ['config 200', 'validated', 'validate 200 ok']);
});
