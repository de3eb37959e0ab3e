// What GET /api/v1/history answers (routes/history.ts holds its schema), from lvsd's ring (history.ts) or
// from Prometheus (history-prometheus.ts).
import type { HistoryMark } from './history-ring.js';
import type { HistoryMetric } from './history-sample.js';

export interface HistorySeries {
  scope: 'virtualServer' | 'realServer';
  service: string;
  realServer: string | null;
  metric: HistoryMetric;
  values: (number | null)[];
}

export interface HistoryView {
  /** Where the samples came from: lvsd's own ring, or the configured Prometheus. */
  source: 'ring' | 'prometheus';
  /** Why the ring answered although a Prometheus is configured. */
  problem?: string;
  periodMs: number;
  capacity: number;
  droppedSeries: number;
  t: number[];
  series: HistorySeries[];
  marks: HistoryMark[];
}
