// The graphs from Prometheus (issue 18), when `api.prometheus` names one that scrapes this director's
// /metrics: the same view as lvsd's own ring (history.ts), over the same span and step, but from what
// Prometheus kept — a director that restarted, or one looked at from another, draws the same lines. What
// /metrics does not carry per real server (bytes, packets, connections/s, check latency) is only in the
// ring; the view says where it came from. Marks (VRRP, health) are this director's own, from the ring.
//
// The queries and the matrix → series mapping are pure; `fetchPrometheusHistory` is the I/O edge.
import type { HistoryMetric } from './history-sample.js';
import type { HistorySeries, HistoryView } from './history-view.js';

export interface PrometheusSource {
  /** Base URL, e.g. http://127.0.0.1:9090. */
  url: string;
  /** Label matchers selecting this director's series, e.g. `job="lvsd", instance="10.0.0.1:9180"`. */
  match: string;
}

export interface RangeQuery {
  scope: HistorySeries['scope'];
  metric: HistoryMetric;
  promql: string;
}

/** A PromQL string literal. */
export function promString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

const COUNTERS: [HistoryMetric, string][] = [
  ['cps', 'lvsd_service_connections_total'],
  ['inBps', 'lvsd_service_in_bytes_total'],
  ['outBps', 'lvsd_service_out_bytes_total'],
  ['inPps', 'lvsd_service_in_packets_total'],
  ['outPps', 'lvsd_service_out_packets_total'],
];

/** The same rates per real server, where the dataplane counts per destination (IPVS, userspace). */
const RS_COUNTERS: [HistoryMetric, string][] = COUNTERS.map(([m, name]) => [m, name.replace('lvsd_service_', 'lvsd_real_server_')]);

/** The queries of one view: per virtual server its rates and connections, per real server its rates, connections and check latency. */
export function historyQueries(match: string, stepMs: number, service?: string): RangeQuery[] {
  const sel = (extra: string): string => `{${[match.trim(), service === undefined ? '' : `service=${promString(service)}`, extra].filter((m) => m !== '').join(', ')}}`;
  // irate: each point is the rate between the last two scrapes before it, whatever the scrape interval (rate()
  // would divide by the whole window, and draw a fresh series at a fraction of its rate). The window only has
  // to hold two scrapes: a minute, or three steps.
  const window = `${String(Math.max(60, Math.ceil((3 * stepMs) / 1000)))}s`;
  const out: RangeQuery[] = COUNTERS.map(([metric, name]) => ({ scope: 'virtualServer', metric, promql: `sum by (service) (irate(${name}${sel('')}[${window}]))` }));
  for (const state of ['active', 'inactive'] as const) {
    out.push({ scope: 'virtualServer', metric: state, promql: `sum by (service) (lvsd_real_server_connections${sel(`state="${state}"`)})` });
    out.push({ scope: 'realServer', metric: state, promql: `sum by (service, real_server) (lvsd_real_server_connections${sel(`state="${state}"`)})` });
  }
  for (const [metric, name] of RS_COUNTERS) out.push({ scope: 'realServer', metric, promql: `sum by (service, real_server) (irate(${name}${sel('')}[${window}]))` });
  out.push({ scope: 'realServer', metric: 'latencyMs', promql: `1000 * max by (service, real_server) (lvsd_real_server_check_latency_seconds${sel('')})` });
  return out;
}

/** One series of a query_range answer. */
export interface PromMatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

/** A query's answer on the view's time axis `t` (ms): a point is placed at the step it falls on. */
export function seriesOf(q: RangeQuery, result: readonly PromMatrixSeries[], t: readonly number[]): HistorySeries[] {
  const first = t[0];
  const step = t.length > 1 ? (t[1] ?? 0) - (first ?? 0) : 1;
  const out: HistorySeries[] = [];
  for (const r of result) {
    const service = r.metric.service;
    const realServer = q.scope === 'realServer' ? r.metric.real_server : null;
    if (service === undefined || realServer === undefined) continue;
    const values: (number | null)[] = t.map(() => null);
    for (const [at, raw] of r.values) {
      const i = Math.round((at * 1000 - (first ?? 0)) / step);
      const v = Number(raw);
      if (i >= 0 && i < values.length && Number.isFinite(v)) values[i] = v;
    }
    out.push({ scope: q.scope, service, realServer, metric: q.metric, values });
  }
  return out;
}

/** The view's time axis: `points` steps ending at `end`, those after `since` only. */
export function timeAxis(end: number, stepMs: number, points: number, since?: number): number[] {
  const last = Math.floor(end / stepMs) * stepMs;
  const t: number[] = [];
  for (let i = points - 1; i >= 0; i--) {
    const at = last - i * stepMs;
    if (since === undefined || at > since) t.push(at);
  }
  return t;
}

/**
 * Reads the view from Prometheus; throws an Error naming the server and what went wrong (unreachable, an
 * HTTP status, Prometheus's own error), so the caller can fall back to the ring and say why.
 */
export async function fetchPrometheusHistory(
  src: PrometheusSource,
  shape: { periodMs: number; capacity: number },
  q: { service?: string; since?: number },
  marks: HistoryView['marks'],
  now = Date.now(),
  timeoutMs = 5000,
): Promise<HistoryView> {
  const t = timeAxis(now, shape.periodMs, shape.capacity, q.since);
  const view: HistoryView = { source: 'prometheus', periodMs: shape.periodMs, capacity: shape.capacity, droppedSeries: 0, t, series: [], marks };
  if (t.length === 0) return view;
  const base = src.url.replace(/\/+$/, '');
  const answers = await Promise.all(historyQueries(src.match, shape.periodMs, q.service).map(async (rq) => {
    const params = new URLSearchParams({ query: rq.promql, start: String((t[0] ?? 0) / 1000), end: String((t[t.length - 1] ?? 0) / 1000), step: String(shape.periodMs / 1000) });
    let res: Response;
    try {
      res = await fetch(`${base}/api/v1/query_range?${params.toString()}`, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      throw new Error(`Prometheus at ${base}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
    }
    const body = (await res.json().catch(() => null)) as { status?: string; error?: string; data?: { resultType?: string; result?: PromMatrixSeries[] } } | null;
    if (!res.ok || body?.status !== 'success' || body.data?.resultType !== 'matrix') {
      throw new Error(`Prometheus at ${base}: ${String(res.status)} ${body?.error ?? 'not a query_range answer'}`);
    }
    return seriesOf(rq, body.data.result ?? [], t);
  }));
  view.series = answers.flat();
  return view;
}
