// An operator's action on a peer director, sent from this one: drain / enable a real server, or a VRRP
// failover, forwarded with the peer token for the logged-in user. The peer must accept actions from this
// director (its cluster.peers entry: acceptActions) and audits it as USER@THIS-DIRECTOR; this director
// audits the forward (cluster.forward) with what the peer answered. "On all directors" is the panel doing
// the action here and forwarding it to each peer.
import { Type } from 'typebox';
import { HttpError } from '../plugins/errors.js';
import { AuditEntrySchema, ErrorSchema } from '../schemas.js';
import { forwardToPeer, type PeerRequest } from '../cluster/peer-client.js';
import type { RunningCluster } from '../cluster/running.js';
import type { Api, ApiDeps } from '../types.js';

const Director = Type.String({ minLength: 1, maxLength: 64, description: 'The peer, by its name in cluster.peers' });
const ForwardBody = Type.Union([
  Type.Object({
    director: Director,
    action: Type.Union([Type.Literal('drain'), Type.Literal('enable')]),
    service: Type.String({ minLength: 1, maxLength: 200 }),
    realServer: Type.String({ minLength: 1, maxLength: 200 }),
  }, { additionalProperties: false }),
  Type.Object({
    director: Director,
    action: Type.Literal('failover'),
    instance: Type.String({ minLength: 1, maxLength: 64 }),
    how: Type.Union([Type.Literal('lower-priority'), Type.Literal('maintenance'), Type.Literal('restore')]),
  }, { additionalProperties: false }),
]);

const enc = encodeURIComponent;

export default function clusterForwardRoutes(app: Api, { store, events }: ApiDeps, running: RunningCluster): void {
  app.post('/api/v1/cluster/forward', {
    schema: {
      summary: 'Do an operator action on a peer director (drain / enable a real server, VRRP failover), for the logged-in user',
      tags: ['cluster', 'actions'],
      body: ForwardBody,
      response: {
        200: Type.Object({ director: Type.String(), answer: Type.Unknown({ description: 'What the peer answered (its route\'s result)' }), audit: Type.Union([AuditEntrySchema, Type.Null()]) }),
        400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 502: ErrorSchema,
      },
    },
    config: { access: 'operator' },
  }, async (req) => {
    const p = req.principal;
    // a forwarded action is not forwarded again: each director acts for its own users only
    if (p === null || p.peer === true) throw new HttpError(403, 'a peer may not forward through this director');
    const { cluster } = await running.current();
    const b = req.body;
    const peer = cluster?.peers.find((x) => x.name === b.director);
    if (peer === undefined) throw new HttpError(404, `no peer "${b.director}" in cluster.peers`);
    const user = p.local ? 'root' : p.name;
    const r: PeerRequest & { user: string } = b.action === 'failover'
      ? { method: 'POST', path: `/api/v1/vrrp/${enc(b.instance)}/failover`, body: { how: b.how }, user }
      : { method: b.action === 'drain' ? 'PUT' : 'DELETE', path: `/api/v1/services/${enc(b.service)}/real-servers/${enc(b.realServer)}/override`, ...(b.action === 'drain' ? { body: { drain: true } } : {}), user };
    const target = b.action === 'failover' ? `${peer.name}: ${b.instance} ${b.how}` : `${peer.name}: ${b.service}/${b.realServer} ${b.action}`;
    const answer = await forwardToPeer(peer, r, cluster?.timeoutMs ?? 2000);
    const entry = await store.audit(user, `cluster.forward.${b.action}`, target, null, answer.ok ? { ok: true } : { ok: false, error: answer.error });
    if (entry !== null) events.push({ ...entry, type: 'audit', action: entry.action });
    if (!answer.ok) throw new HttpError(502, `${peer.name}: ${answer.error}`);
    return { director: peer.name, answer: answer.data, audit: entry };
  });
}
