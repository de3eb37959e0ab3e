// The panel's graphs: GET /api/v1/history, the ring of samples lvsd keeps or the configured Prometheus
// (history.ts), for every viewer.
import { Type } from 'typebox';
import { ErrorSchema } from '../schemas.js';
import { HISTORY_METRICS, type HistoryMetric } from '../history-sample.js';
import type { History } from '../history.js';
import type { Api } from '../types.js';

const Num = Type.Union([Type.Number(), Type.Null()]);

export const HistorySchema = Type.Object({
  source: Type.Union([Type.Literal('ring'), Type.Literal('prometheus')], { description: "where the samples came from: lvsd's own ring, or the Prometheus of api.prometheus" }),
  problem: Type.Optional(Type.String({ description: 'why the ring answered although a Prometheus is configured' })),
  periodMs: Type.Integer({ description: 'time between samples' }),
  capacity: Type.Integer({ description: 'samples kept (periodMs × capacity = the time span)' }),
  droppedSeries: Type.Integer({ description: 'series not kept because the series limit was reached' }),
  t: Type.Array(Type.Number(), { description: 'sample times, ms since the epoch, oldest first' }),
  series: Type.Array(Type.Object({
    scope: Type.Union([Type.Literal('virtualServer'), Type.Literal('realServer')]),
    service: Type.String({ description: 'virtual server id, e.g. tcp:192.168.77.100:80' }),
    realServer: Type.Union([Type.String(), Type.Null()], { description: 'real server id address:port, null for the virtual server' }),
    metric: Type.Unsafe<HistoryMetric>(Type.String({ enum: [...HISTORY_METRICS], description: 'cps, inBps, outBps, inPps, outPps: per second over the period; active, inactive: connections; latencyMs: last health check' })),
    values: Type.Array(Num, { description: 'one per time in t; null: no value then' }),
  })),
  marks: Type.Array(Type.Object({
    at: Type.Number({ description: 'ms since the epoch' }),
    kind: Type.Union([Type.Literal('vrrp'), Type.Literal('health')]),
    text: Type.String(),
  }), { description: 'VRRP transitions and health changes, for marks on the time axis' }),
});

export default function historyRoutes(app: Api, history: History): void {
  app.get('/api/v1/history', {
    schema: {
      summary: 'Recent samples per virtual server and real server (connections/s, connections, bytes/s, packets/s, health-check latency) and VRRP/health marks',
      tags: ['status'],
      querystring: Type.Object({
        service: Type.Optional(Type.String({ minLength: 1, description: 'only this virtual server (id)' })),
        since: Type.Optional(Type.Number({ description: 'only samples after this time (ms since the epoch)' })),
      }, { additionalProperties: false }),
      response: { 200: HistorySchema, 400: ErrorSchema, 401: ErrorSchema },
    },
    config: { access: 'viewer' },
  }, (req) => history.read(req.query));
}
