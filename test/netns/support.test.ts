// The namespace and nginx helpers every integration test stands on.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Topology } from '../support/netns.js';
import { startNginx } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';

test('two hosts on one segment reach each other and nginx answers with its name', async () => {
  requireRoot();
  requireCommands('ip', 'nginx', 'curl');
  const topo = await Topology.create('support');
  after(() => {
    topo.destroy();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.9.0.1/24', 'fd09::1/64'] });
  const rs = await topo.addHost({ name: 'rs1', addresses: ['10.9.0.11/24', 'fd09::11/64'] });
  const nginx = await startNginx(rs, { body: 'rs1' });
  try {
    const v4 = await client.exec('curl', ['-sS', '--max-time', '5', 'http://10.9.0.11/']);
    assert.equal(v4.stdout.trim(), 'rs1');
    const v6 = await client.exec('curl', ['-sS', '--max-time', '5', 'http://[fd09::11]/']);
    assert.equal(v6.stdout.trim(), 'rs1');
  } finally {
    await nginx.stop();
  }
  await assert.rejects(client.exec('curl', ['-sS', '--max-time', '2', 'http://10.9.0.11/']));
});
