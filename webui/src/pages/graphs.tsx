// The graphs: a virtual server's connections/s, active connections, bytes/s, packets/s and each real
// server's health-check latency, from lvsd's own history ring or the Prometheus of api.prometheus (GET
// /api/v1/history says which), VRRP transitions and health changes as marks on the time axis. Refreshed
// once per sample period.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc, errorText } from '../api.js';
import { useLive } from '../live.js';
import type { Chart, ChartData } from '../charts/chart.js';

type Metric = 'cps' | 'active' | 'inactive' | 'inBps' | 'outBps' | 'inPps' | 'outPps' | 'latencyMs';

interface HistoryView {
  source: 'ring' | 'prometheus';
  problem?: string;
  periodMs: number;
  capacity: number;
  t: number[];
  series: { scope: 'virtualServer' | 'realServer'; service: string; realServer: string | null; metric: Metric; values: (number | null)[] }[];
  marks: { at: number; kind: 'vrrp' | 'health'; text: string }[];
}

interface Panel {
  id: string;
  title: string;
  unit: string;
  pick: (h: HistoryView) => ChartData['series'];
}

const byRs = (metric: Metric, suffix = '') => (h: HistoryView): ChartData['series'] =>
  h.series.filter((s) => s.scope === 'realServer' && s.metric === metric).map((s) => ({ label: `${s.realServer ?? ''}${suffix}`, values: s.values }));
const ofVs = (...metrics: [Metric, string][]) => (h: HistoryView): ChartData['series'] =>
  metrics.flatMap(([m, label]) => h.series.filter((s) => s.scope === 'virtualServer' && s.metric === m).map((s) => ({ label, values: s.values })));

const PANELS: Panel[] = [
  { id: 'cps', title: 'Connections/s', unit: '/s', pick: (h) => [...ofVs(['cps', 'virtual server'])(h), ...byRs('cps')(h)] },
  { id: 'active', title: 'Active connections', unit: '', pick: (h) => [...ofVs(['active', 'virtual server'])(h), ...byRs('active')(h)] },
  { id: 'bytes', title: 'Bytes/s', unit: 'B/s', pick: (h) => [...ofVs(['inBps', 'in'], ['outBps', 'out'])(h), ...byRs('inBps', ' in')(h), ...byRs('outBps', ' out')(h)] },
  { id: 'packets', title: 'Packets/s', unit: '/s', pick: (h) => [...ofVs(['inPps', 'in'], ['outPps', 'out'])(h), ...byRs('inPps', ' in')(h), ...byRs('outPps', ' out')(h)] },
  { id: 'latency', title: 'Health-check latency', unit: 'ms', pick: byRs('latencyMs') },
];

/** The nftables dataplane counts new connections per virtual server only: a flat zero there would read as "no traffic". */
const NOT_COUNTED: Record<string, string> = { bytes: 'Bytes/s', packets: 'Packets/s' };

function NotCounted({ id, kind }: { id: string; kind: string }) {
  return (
    <figure class="chart chart-none" data-testid={`chart-${id}`} data-points={0}>
      <figcaption><strong>{NOT_COUNTED[id]}</strong><p class="small muted">Not counted by the {kind} dataplane (it counts new connections per virtual server); the ipvs and userspace dataplanes count bytes and packets.</p></figcaption>
    </figure>
  );
}

function ChartBox({ panel, data }: { panel: Panel; data: ChartData }) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<Chart | null>(null);
  const shape = data.series.map((s) => s.label).join('|');
  const latest = useRef(data);
  latest.current = data;
  // a new set of series (a real server added) needs a new chart; new values only an update
  useEffect(() => {
    let gone = false;
    void import('../charts/chart.js').then((m) => {
      if (gone || host.current === null) return;
      chart.current = m.createChart(host.current, { title: panel.title, unit: panel.unit, data: latest.current });
    });
    return () => { gone = true; chart.current?.destroy(); chart.current = null; };
  }, [shape, panel]);
  useEffect(() => { chart.current?.update(data); }, [data]);
  const values = data.series.flatMap((s) => s.values).filter((v): v is number => v !== null);
  return (
    <figure class="chart" data-testid={`chart-${panel.id}`} data-points={values.length} data-max={values.length === 0 ? 0 : Math.max(...values)}>
      <div ref={host} aria-hidden="true" />
      <figcaption class="sr-only">{panel.title}: {values.length} values{values.length > 0 ? `, latest ${values[values.length - 1] ?? ''} ${panel.unit}` : ''}</figcaption>
    </figure>
  );
}

export function Graphs() {
  const { snap } = useLive();
  const [service, setService] = useState<string | null>(null);
  const [view, setView] = useState<HistoryView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const chosen = service ?? snap?.virtualServices[0]?.id ?? null;

  useEffect(() => {
    if (chosen === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let gone = false;
    const poll = async (): Promise<void> => {
      let period = 10_000;
      try {
        const h = await api<HistoryView>('GET', `/api/v1/history?service=${enc(chosen)}`);
        period = h.periodMs;
        if (!gone) { setView(h); setError(null); }
      } catch (e) {
        if (!gone) setError(errorText(e));
      }
      if (!gone) timer = setTimeout(() => { void poll(); }, Math.min(Math.max(period, 1000), 10_000));
    };
    void poll();
    return () => { gone = true; clearTimeout(timer); };
  }, [chosen]);

  if (snap === null) return <p class="muted">Loading…</p>;
  if (snap.virtualServices.length === 0) return <p class="muted">No virtual servers configured.</p>;
  const span = view === null ? '' : `last ${Math.round((view.periodMs * view.capacity) / 60_000)} min, one sample every ${view.periodMs / 1000} s, from ${view.source === 'prometheus' ? 'Prometheus' : 'lvsd'}`;
  return (
    <section class="card" aria-labelledby="graphs-h">
      <header class="card-head wrap">
        <h2 id="graphs-h">Graphs <span class="muted small">{span}</span></h2>
        <label class="small">Virtual server{' '}
          <select value={chosen ?? ''} onChange={(e) => { setService((e.target as HTMLSelectElement).value); }}>
            {snap.virtualServices.map((s) => <option key={s.id} value={s.id}>{s.name} ({s.id})</option>)}
          </select>
        </label>
      </header>
      {error !== null && <p class="error">{error}</p>}
      {view?.problem !== undefined && <p class="error" data-testid="history-problem">{view.problem}</p>}
      {view !== null && view.marks.length > 0 && (
        <p class="small muted" data-testid="marks">Marks: {view.marks.slice(-5).map((m) => `${new Date(m.at).toLocaleTimeString()} ${m.text}`).join(' · ')}</p>
      )}
      <div class="charts">
        {view !== null && PANELS.map((p) => (snap.dataplane.kind === 'nftables' && p.id in NOT_COUNTED
          ? <NotCounted key={p.id} id={p.id} kind={snap.dataplane.kind} />
          : <ChartBox key={p.id} panel={p} data={{ t: view.t, series: p.pick(view), marks: view.marks }} />))}
      </div>
    </section>
  );
}
