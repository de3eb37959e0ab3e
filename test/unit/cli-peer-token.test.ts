// `lvsd peer-token`: a new token in a 0600 file, the sha256 the peer's config accepts it by, no overwrite,
// and --hash reading an existing token back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerTokenCommand } from '../../daemon/cli/peer-token.js';
import { peerOfToken, peerTokenSha256 } from '../../daemon/api/cluster/peer-token.js';

function io(): { out: string[]; err: string[]; io: { out: (t: string) => void; err: (t: string) => void } } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t) => out.push(t), err: (t) => err.push(t) } };
}

test('peer-token: writes a 0600 token, prints the sha256 a peer accepts it by, never overwrites', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-peer-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'peer-lb2.token');
  const a = io();
  assert.equal(await peerTokenCommand.run([file], a.io), 0);
  const token = (await readFile(file, 'utf8')).trim();
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const sha = /acceptTokenSha256: ([0-9a-f]{64})/.exec(a.out.join('\n'))?.[1];
  assert.equal(sha, peerTokenSha256(token));
  // the printed hash is what the receiving side matches the token with
  const cluster = { name: 'c', timeoutMs: 1000, peers: [{ name: 'lb1', url: 'http://127.0.0.1:1', tokenFile: '/x', acceptTokenSha256: sha, acceptActions: false }] };
  assert.equal(peerOfToken(cluster, token)?.name, 'lb1');
  assert.equal(peerOfToken(cluster, `${token}x`), null);

  const b = io();
  assert.equal(await peerTokenCommand.run([file], b.io), 1);
  assert.match(b.err.join(), /exists/);
  assert.equal((await readFile(file, 'utf8')).trim(), token, 'the token is unchanged');

  const c = io();
  assert.equal(await peerTokenCommand.run(['--hash', file], c.io), 0);
  assert.deepEqual(c.out, [`acceptTokenSha256: ${peerTokenSha256(token)}`]);
});
