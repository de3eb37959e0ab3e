// The cluster in one view: this director and each peer side by side (read director to director with the
// peer tokens of the cluster section), and what disagrees between them (cluster/diff.ts). A peer that
// cannot be read shows as unreachable with the reason; every peer is asked at once and each within the
// cluster timeout, so one dead peer never holds the page.
import { ClusterMemberSchema, ClusterSchema, ErrorSchema } from '../schemas.js';
import { HttpError } from '../plugins/errors.js';
import { clusterDifferences, type ClusterMember } from '../cluster/diff.js';
import { fetchPeer, MEMBER_PATH } from '../cluster/peer-client.js';
import type { RunningCluster } from '../cluster/running.js';
import type { ClusterDirector, ClusterView } from '../cluster/view.js';
import type { Api, ApiDeps } from '../types.js';

export default function clusterRoutes(app: Api, { director }: ApiDeps, running: RunningCluster): void {
  const self = async (): Promise<ClusterMember> => ({ snapshot: director.snapshot(), vrrpAuth: (await running.current()).vrrpAuth });

  app.get(MEMBER_PATH, {
    schema: { summary: 'This director as its peers read it: the status snapshot and VRRP authentication digests', tags: ['cluster'], response: { 200: ClusterMemberSchema, 401: ErrorSchema } },
    config: { access: 'viewer' },
  }, self);

  app.get('/api/v1/cluster', {
    schema: { summary: 'This director and its peers side by side, with what disagrees between them', tags: ['cluster'], response: { 200: ClusterSchema, 401: ErrorSchema, 403: ErrorSchema } },
    config: { access: 'viewer' },
  }, async (req): Promise<ClusterView> => {
    // a peer reads members only: a peer's read fanning out again would multiply with every director
    if (req.principal?.peer === true) throw new HttpError(403, `a peer token reads ${MEMBER_PATH} only`);
    const { cluster } = await running.current();
    const me = await self();
    const peers = await Promise.all((cluster?.peers ?? []).map(async (p) => ({ peer: p, answer: await fetchPeer(p, cluster?.timeoutMs ?? 2000) })));
    for (const { peer, answer } of peers) if (!answer.ok) req.log.warn({ peer: peer.name, url: peer.url, error: answer.error }, 'cluster peer unreachable');
    const directors: ClusterDirector[] = [
      { name: me.snapshot.node, url: null, reachable: true, error: null, latencyMs: 0, member: me },
      ...peers.map(({ peer, answer }) => ({
        name: peer.name,
        url: peer.url,
        reachable: answer.ok,
        error: answer.ok ? null : answer.error,
        latencyMs: answer.latencyMs,
        member: answer.ok ? answer.member : null,
      })),
    ];
    const readable = directors.flatMap((d) => (d.member === null ? [] : [{ name: d.name, member: d.member }]));
    return { name: cluster?.name ?? 'cluster', self: me.snapshot.node, at: new Date().toISOString(), directors, differences: clusterDifferences(readable) };
  });
}
