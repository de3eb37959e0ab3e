// Small shared pieces: badges, the confirmation dialog, toasts, the rate sparkline, time formatting.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { Override, VrrpState } from './types.js';

export function StateBadge({ state, large }: { state: VrrpState; large?: boolean }) {
  return <span class={`badge state-${state.toLowerCase()}${large === true ? ' large' : ''}`} data-testid="vrrp-state">{state}</span>;
}

export function HealthBadge({ status }: { status: 'up' | 'down' | 'unknown' }) {
  const label = status === 'up' ? 'UP' : status === 'down' ? 'DOWN' : 'UNKNOWN';
  return <span class={`badge health-${status}`}>{label}</span>;
}

export function OverrideChips({ o }: { o: Override | null }) {
  if (o === null) return null;
  return (
    <span class="chips">
      {o.maintenance === true && <span class="chip chip-maint">maintenance</span>}
      {o.drain === true && <span class="chip chip-drain">drained</span>}
      {o.weight !== undefined && <span class="chip chip-weight">weight {o.weight}</span>}
    </span>
  );
}

export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const w = 160;
  const h = 36;
  const max = Math.max(1, ...values);
  const n = values.length;
  const pts = values.map((v, i) => `${n <= 1 ? w : (i / (n - 1)) * w},${h - 2 - (v / max) * (h - 4)}`).join(' ');
  const last = values.at(-1) ?? 0;
  return (
    <figure class="spark" aria-label={`${label}: ${last} per second now, peak ${max}`}>
      <svg viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-hidden="true">
        {n > 1 && <polyline points={`0,${h} ${pts} ${w},${h}`} class="spark-fill" />}
        {n > 1 && <polyline points={pts} class="spark-line" />}
        {n <= 1 && <line x1={0} y1={h - 2} x2={w} y2={h - 2} class="spark-line spark-empty" />}
      </svg>
      <figcaption>
        <strong>{fmtNum(last)}</strong> conn/s
      </figcaption>
    </figure>
  );
}

export function fmtNum(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function fmtBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(v < 10 && i > 0 ? 1 : 0)} ${units[i] ?? ''}`;
}

export function fmtTime(iso: string | null): string {
  if (iso === null) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { hour12: false, year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function ago(iso: string | null, now = Date.now()): string {
  if (iso === null) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

// ---- confirmation dialog ------------------------------------------------------------------------

export interface AskOptions {
  title: string;
  body: ComponentChildren;
  confirm: string;
  danger?: boolean;
  /** Ask for a number (e.g. a weight) too. */
  number?: { label: string; min: number; max: number; value: number };
  /** Ask for a new password too. */
  password?: { label: string; minLength: number };
}

export interface Answer {
  ok: boolean;
  value: number;
  text: string;
}

interface Pending extends AskOptions {
  resolve: (v: Answer) => void;
}

let showAsk: ((p: Pending) => void) | null = null;

/** Opens the modal dialog; resolves when the operator confirms or cancels. */
export function ask(opts: AskOptions): Promise<Answer> {
  return new Promise((resolve) => {
    if (showAsk === null) {
      resolve({ ok: false, value: 0, text: '' });
      return;
    }
    showAsk({ ...opts, resolve });
  });
}

export function AskHost() {
  const [p, setP] = useState<Pending | null>(null);
  const [value, setValue] = useState(0);
  const [text, setText] = useState('');
  const ref = useRef<HTMLDialogElement>(null);
  const returnFocus = useRef<Element | null>(null);
  useEffect(() => {
    showAsk = (next) => {
      returnFocus.current = document.activeElement;
      setValue(next.number?.value ?? 0);
      setText('');
      setP(next);
    };
    return () => {
      showAsk = null;
    };
  }, []);
  useEffect(() => {
    const d = ref.current;
    if (p !== null && d !== null && !d.open) d.showModal();
  }, [p]);
  const close = (ok: boolean): void => {
    ref.current?.close();
    if (p !== null) p.resolve({ ok, value, text });
    setP(null);
    const el = returnFocus.current;
    if (el instanceof HTMLElement) el.focus();
  };
  const n = p?.number;
  const pw = p?.password;
  const invalid = (n !== undefined && (!Number.isInteger(value) || value < n.min || value > n.max)) || (pw !== undefined && text.length < pw.minLength);
  return (
    <dialog ref={ref} class="ask" aria-labelledby="ask-title" onCancel={(e) => { e.preventDefault(); close(false); }}>
      {p !== null && (
        <form method="dialog" onSubmit={(e) => { e.preventDefault(); if (!invalid) close(true); }}>
          <h2 id="ask-title">{p.title}</h2>
          <div class="ask-body">{p.body}</div>
          {n !== undefined && (
            <label class="field">
              <span>{n.label}</span>
              <input type="number" inputMode="numeric" min={n.min} max={n.max} step={1} value={value} autoFocus
                aria-invalid={invalid} onInput={(e) => { setValue(Number((e.target as HTMLInputElement).value)); }} />
              {invalid && <small class="error">a whole number from {n.min} to {n.max}</small>}
            </label>
          )}
          {pw !== undefined && (
            <label class="field">
              <span>{pw.label}</span>
              <input type="password" autoComplete="new-password" minLength={pw.minLength} value={text} autoFocus
                onInput={(e) => { setText((e.target as HTMLInputElement).value); }} />
              <small class="muted">at least {pw.minLength} characters</small>
            </label>
          )}
          <div class="ask-actions">
            <button type="button" class="btn" onClick={() => { close(false); }}>Cancel</button>
            <button type="submit" class={`btn ${p.danger === true ? 'btn-danger' : 'btn-primary'}`} disabled={invalid} autoFocus={n === undefined && pw === undefined}>{p.confirm}</button>
          </div>
        </form>
      )}
    </dialog>
  );
}

// ---- toasts -------------------------------------------------------------------------------------

interface Toast {
  id: number;
  text: string;
  kind: 'ok' | 'error';
}

let pushToast: ((t: Omit<Toast, 'id'>) => void) | null = null;

export function toast(text: string, kind: 'ok' | 'error' = 'ok'): void {
  pushToast?.({ text, kind });
}

export function ToastHost() {
  const [list, setList] = useState<Toast[]>([]);
  useEffect(() => {
    let id = 0;
    pushToast = (t) => {
      const item = { ...t, id: ++id };
      setList((l) => [...l, item].slice(-4));
      window.setTimeout(() => {
        setList((l) => l.filter((x) => x.id !== item.id));
      }, t.kind === 'error' ? 8000 : 4000);
    };
    return () => {
      pushToast = null;
    };
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>{t.text}</div>
      ))}
    </div>
  );
}
