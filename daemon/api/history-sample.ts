// What one history sample holds, from two director snapshots a period apart: per virtual server and per
// real server, connections/s, bytes/s and packets/s (from the dataplane's cumulative counters, so the rate
// is the period's own average, not the dataplane's estimate), active and inactive connections, and per
// real server the last health-check latency. Keys: "<scope>|<virtual server id>|<real server id or ''>|<metric>".
import type { DirectorSnapshot, RateCounters } from '../director/snapshot.js';

export const HISTORY_METRICS = ['cps', 'active', 'inactive', 'inBps', 'outBps', 'inPps', 'outPps', 'latencyMs'] as const;
export type HistoryMetric = (typeof HISTORY_METRICS)[number];

export function historyKey(service: string, realServer: string | null, metric: HistoryMetric): string {
  return `${realServer === null ? 'vs' : 'rs'}|${service}|${realServer ?? ''}|${metric}`;
}

export function parseHistoryKey(key: string): { scope: 'virtualServer' | 'realServer'; service: string; realServer: string | null; metric: HistoryMetric } | null {
  const [scope, service, rs, metric] = key.split('|');
  if ((scope !== 'vs' && scope !== 'rs') || service === undefined || rs === undefined || !(HISTORY_METRICS as readonly string[]).includes(metric ?? '')) return null;
  return { scope: scope === 'vs' ? 'virtualServer' : 'realServer', service, realServer: scope === 'rs' ? rs : null, metric: metric as HistoryMetric };
}

type Totals = Pick<RateCounters, 'conns' | 'inBytes' | 'outBytes' | 'inPackets' | 'outPackets'>;

/** Per second over `dt` seconds; a counter that went down (dataplane flushed, service re-added) gives no value. */
function rates(out: Map<string, number>, key: (m: HistoryMetric) => string, now: Totals | null, before: Totals | null | undefined, dt: number): void {
  if (now === null || before === null || before === undefined || dt <= 0) return;
  const pairs: [HistoryMetric, keyof Totals][] = [['cps', 'conns'], ['inBps', 'inBytes'], ['outBps', 'outBytes'], ['inPps', 'inPackets'], ['outPps', 'outPackets']];
  for (const [metric, field] of pairs) {
    const d = now[field] - before[field];
    if (d >= 0) out.set(key(metric), d / dt);
  }
}

/** The cumulative counters of a snapshot, by series prefix, for the next sample's rates. */
export type CounterMemo = Map<string, Totals>;

export function sampleOf(snap: DirectorSnapshot, previous: { at: number; counters: CounterMemo } | null, at: number): { values: Map<string, number>; counters: CounterMemo } {
  const values = new Map<string, number>();
  const counters: CounterMemo = new Map();
  const dt = previous === null ? 0 : (at - previous.at) / 1000;
  for (const vs of snap.virtualServices) {
    const vkey = (m: HistoryMetric): string => historyKey(vs.id, null, m);
    if (vs.counters !== null) counters.set(vkey('cps'), vs.counters);
    rates(values, vkey, vs.counters, previous?.counters.get(vkey('cps')), dt);
    let active = 0;
    let inactive = 0;
    for (const rs of vs.realServers) {
      const rkey = (m: HistoryMetric): string => historyKey(vs.id, rs.id, m);
      active += rs.connections.active;
      inactive += rs.connections.inactive;
      values.set(rkey('active'), rs.connections.active);
      values.set(rkey('inactive'), rs.connections.inactive);
      if (rs.counters !== null) counters.set(rkey('cps'), rs.counters);
      rates(values, rkey, rs.counters, previous?.counters.get(rkey('cps')), dt);
      if (rs.health.lastCheck !== null) values.set(rkey('latencyMs'), rs.health.lastCheck.latencyMs);
    }
    values.set(vkey('active'), active);
    values.set(vkey('inactive'), inactive);
  }
  return { values, counters };
}
