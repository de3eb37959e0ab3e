// The running config and a candidate: edit it in a code editor (schema completion and hover, lvsd's errors
// as inline markers), validate, diff against the running config, apply (admin), roll back (admin).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { live } from '../live.js';
import { ask, toast } from '../ui.js';
import type { ConfigEditor } from '../editor/code-editor.js';
import { allows, type ApplyResult, type ConfigChange, type ConfigProblem, type Role, type RunningConfig } from '../types.js';

interface DiffResult {
  ok: boolean;
  errors: ConfigProblem[];
  changes: ConfigChange[];
  lines: { op: ' ' | '+' | '-'; text: string }[];
}

type Result =
  | { kind: 'valid' }
  | { kind: 'errors'; title: string; errors: string[] }
  | { kind: 'diff'; diff: DiffResult; candidate: string }
  | { kind: 'applied'; what: string; r: ApplyResult };

function Changes({ changes }: { changes: ConfigChange[] }) {
  if (changes.length === 0) return <p class="muted">No changes.</p>;
  return (
    <ul class="changes">
      {changes.map((c) => (
        <li key={`${c.kind}-${c.name}-${c.change}`} class={`chg-${c.change}`}>
          <span class="chip">{c.change}</span> {c.kind} <code>{c.name}</code>{c.detail !== undefined && <span class="muted"> — {c.detail}</span>}
          {c.restart === true && <span class="error"> — takes effect at the next restart</span>}
        </li>
      ))}
    </ul>
  );
}

/** The candidate against the running config, as a read-only unified diff (CodeMirror's merge view). */
function DiffView({ running, candidate }: { running: string; candidate: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let view: { destroy: () => void } | null = null;
    let gone = false;
    void import('../editor/code-editor.js').then((m) => {
      if (!gone && host.current !== null) view = m.createDiffView(host.current, running, candidate);
    });
    return () => { gone = true; view?.destroy(); };
  }, [running, candidate]);
  return <div ref={host} class="cm-host cm-diff" data-testid="config-diff" />;
}

/** How long the editor waits after the last keystroke before asking lvsd to validate (markers follow). */
const VALIDATE_AFTER_MS = 600;

export function ConfigPage({ role }: { role: Role }) {
  const [running, setRunning] = useState<RunningConfig | null>(null);
  const [text, setTextState] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<Result | null>(null);
  const [problems, setProblems] = useState<ConfigProblem[] | null>(null);
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<ConfigEditor | null>(null);
  const latest = useRef('');
  // one text, two holders: the editor's document and this state; a change from the page goes to both
  const setText = (t: string): void => {
    latest.current = t;
    setTextState(t);
    editor.current?.setText(t);
  };

  useEffect(() => {
    let gone = false;
    void import('../editor/code-editor.js').then((m) => {
      if (gone || host.current === null) return;
      editor.current = m.createConfigEditor(host.current, {
        text: latest.current,
        label: 'Config (YAML)',
        readOnly: false,
        onChange: (t) => { latest.current = t; setTextState(t); },
      });
    });
    return () => { gone = true; editor.current?.destroy(); editor.current = null; };
  }, []);

  const mark = (errors: ConfigProblem[]): void => {
    setProblems(errors);
    editor.current?.setProblems(errors);
  };

  // validate as the operator types: the markers are lvsd's own errors, at their line and column
  useEffect(() => {
    if (running === null) return;
    const typed = text;
    const timer = setTimeout(() => {
      void api<{ ok: boolean; errors: ConfigProblem[] }>('POST', '/api/v1/config/validate', { text: typed }).then((r) => {
        if (latest.current === typed) mark(r.errors);
      }, () => undefined);
    }, VALIDATE_AFTER_MS);
    return () => { clearTimeout(timer); };
  }, [text, running]);

  const load = async (): Promise<void> => {
    try {
      const r = await api<RunningConfig>('GET', '/api/v1/config');
      setRunning(r);
      setText(r.text);
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const run = async (fn: () => Promise<void>): Promise<void> => {
    setBusy(true);
    try {
      await fn();
    } catch (e) {
      const details = e instanceof Error && 'details' in e ? (e as { details: string[] }).details : [];
      setResult({ kind: 'errors', title: errorText(e), errors: details });
    } finally {
      setBusy(false);
    }
  };

  const validate = () => run(async () => {
    const r = await api<{ ok: boolean; errors: ConfigProblem[] }>('POST', '/api/v1/config/validate', { text });
    mark(r.errors);
    setResult(r.ok ? { kind: 'valid' } : { kind: 'errors', title: `${r.errors.length} error(s)`, errors: r.errors.map((e) => e.message) });
  });
  const diff = () => run(async () => {
    const d = await api<DiffResult>('POST', '/api/v1/config/diff', { text });
    mark(d.errors);
    setResult(d.ok ? { kind: 'diff', diff: d, candidate: text } : { kind: 'errors', title: `${d.errors.length} error(s)`, errors: d.errors.map((e) => e.message) });
  });
  const apply = () => run(async () => {
    const d = await api<DiffResult>('POST', '/api/v1/config/diff', { text });
    mark(d.errors);
    if (!d.ok) {
      setResult({ kind: 'errors', title: `not applied: ${d.errors.length} error(s)`, errors: d.errors.map((e) => e.message) });
      return;
    }
    // the diff stays on screen behind the dialog: what is about to change, line by line
    setResult({ kind: 'diff', diff: d, candidate: text });
    const { ok } = await ask({ title: 'Apply this config?', body: <><p>lvsd validates it, writes it to <code>{running?.path}</code> and reloads.</p><Changes changes={d.changes} /></>, confirm: 'Apply', danger: true });
    if (!ok) return;
    const r = await api<ApplyResult>('POST', '/api/v1/config/apply', { text, expectedHash: running?.hash });
    setResult({ kind: 'applied', what: 'Applied', r });
    toast(r.restartNeeded.length === 0 ? `config applied (${r.changes.length} change(s))` : `config applied; restart lvsd for ${r.restartNeeded.join(', ')}`, r.restartNeeded.length === 0 ? undefined : 'error');
    await load();
    live.soon();
  });
  const rollback = () => run(async () => {
    const { ok } = await ask({ title: 'Roll back the config?', body: <p>Back to the last config that applied cleanly before the running one.</p>, confirm: 'Roll back', danger: true });
    if (!ok) return;
    const r = await api<ApplyResult>('POST', '/api/v1/config/rollback');
    setResult({ kind: 'applied', what: 'Rolled back', r });
    toast('config rolled back');
    await load();
    live.soon();
  });

  const dirty = running !== null && text !== running.text;
  const isAdmin = allows(role, 'admin');
  return (
    <div class="config-layout">
      <section class="card" aria-labelledby="cfg-h">
        <header class="card-head wrap">
          <h2 id="cfg-h">Config {running !== null && <span class="muted small"><code>{running.path}</code> · sha256 {running.hash.slice(0, 12)}</span>}</h2>
          {dirty && <span class="chip chip-drain">edited</span>}
        </header>
        <div ref={host} class="cm-host" data-testid="config-editor" />
        <p class="small muted" aria-live="polite" data-testid="marker-count">
          {problems === null ? 'Ctrl-Space completes keys and values from the schema; hover a key for what it means.' : problems.length === 0 ? '✓ lvsd finds no error' : (
            <>
              <span>{problems.length} error(s) marked in the text</span>
              {problems.filter((p) => p.line !== undefined).slice(0, 5).map((p, i) => (
                <button key={i} type="button" class="btn btn-sm btn-link" title={p.message} onClick={() => { editor.current?.reveal(p); }}>go to line {p.line}{p.column !== undefined && `:${p.column}`}</button>
              ))}
            </>
          )}
        </p>
        <div class="actions">
          <button class="btn" disabled={busy} onClick={() => void validate()}>Validate</button>
          <button class="btn" disabled={busy} onClick={() => void diff()}>Diff</button>
          {isAdmin && <button class="btn btn-primary" disabled={busy || !dirty} onClick={() => void apply()}>Apply…</button>}
          {isAdmin && <button class="btn btn-danger" disabled={busy || running?.canRollback !== true} onClick={() => void rollback()}>Roll back…</button>}
          {dirty && <button class="btn btn-link" disabled={busy} onClick={() => { setText(running.text); setResult(null); }}>Discard edits</button>}
        </div>
      </section>
      <section class="card result" aria-live="polite" aria-labelledby="res-h">
        <h2 id="res-h">Result</h2>
        {result === null && <p class="muted">Validate or diff the text on the left; nothing changes until you apply.</p>}
        {result?.kind === 'valid' && <p class="ok-text">✓ Valid.</p>}
        {result?.kind === 'errors' && (
          <>
            <p class="error">{result.title}</p>
            <ul class="errors">{result.errors.map((e) => <li key={e}><code>{e}</code></li>)}</ul>
          </>
        )}
        {result?.kind === 'diff' && (
          <>
            <Changes changes={result.diff.changes} />
            {running !== null && <DiffView running={running.text} candidate={result.candidate} />}
          </>
        )}
        {result?.kind === 'applied' && (
          <>
            <p class="ok-text">✓ {result.what}: now sha256 {result.r.hash.slice(0, 12)}</p>
            <Changes changes={result.r.changes} />
          </>
        )}
      </section>
    </div>
  );
}
