// One time-series chart (uPlot: small, canvas, no dependencies), with marks drawn as vertical lines on the
// time axis (VRRP transitions in the accent colour, health changes in grey). Loaded on demand by the graphs
// page. uPlot styles elements through the CSSOM and its stylesheet is a file: both pass the panel's CSP.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartMark {
  at: number;
  kind: 'vrrp' | 'health';
  text: string;
}

export interface ChartData {
  /** Sample times in ms. */
  t: number[];
  series: { label: string; values: (number | null)[] }[];
  marks: ChartMark[];
}

const PALETTE = ['#2454d6', '#137333', '#b3261e', '#8a5300', '#7b3fbf', '#00798c', '#c2185b', '#5b6470'];

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v === '' ? fallback : v;
}

/** 12,000,000 → "12M": axis labels that fit. */
function si(v: number): string {
  const a = Math.abs(v);
  for (const [d, u] of [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']] as const) if (a >= d) return `${Math.round((v / d) * 10) / 10}${u}`;
  return String(Math.round(v * 100) / 100);
}

export interface Chart {
  update(data: ChartData): void;
  destroy(): void;
}

export function createChart(parent: HTMLElement, opts: { title: string; unit: string; data: ChartData }): Chart {
  let marks = opts.data.marks;
  const fg = cssVar('--muted', '#5b6470');
  const grid = cssVar('--line', '#dde1e6');
  const toAligned = (d: ChartData): uPlot.AlignedData => [d.t.map((x) => x / 1000), ...d.series.map((s) => s.values)] as uPlot.AlignedData;
  const width = (): number => Math.max(parent.clientWidth, 240);
  const plot = new uPlot({
    title: opts.title,
    width: width(),
    height: 200,
    series: [{}, ...opts.data.series.map((s, i) => ({ label: s.label, stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: false, value: (_u: uPlot, v: number | null) => (v === null ? '–' : `${Math.round(v * 10) / 10} ${opts.unit}`) }))],
    axes: [
      { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
      { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 56, values: (_u, ticks) => ticks.map(si) },
    ],
    scales: { y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
    hooks: {
      draw: [
        (u) => {
          const { ctx } = u;
          ctx.save();
          for (const m of marks) {
            const x = u.valToPos(m.at / 1000, 'x', true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.strokeStyle = m.kind === 'vrrp' ? cssVar('--accent', '#2454d6') : fg;
            ctx.setLineDash(m.kind === 'vrrp' ? [] : [4, 4]);
            ctx.lineWidth = 1.5 * devicePixelRatio;
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
          }
          ctx.restore();
        },
      ],
    },
  }, toAligned(opts.data), parent);
  const onResize = (): void => { plot.setSize({ width: width(), height: 200 }); };
  window.addEventListener('resize', onResize);
  return {
    update(d) {
      marks = d.marks;
      plot.setData(toAligned(d));
    },
    destroy() {
      window.removeEventListener('resize', onResize);
      plot.destroy();
    },
  };
}
