// The config editor: CodeMirror 6 with YAML highlighting, completion and hover from config/lvsd.schema.json,
// and lvsd's own validation errors as inline markers at their line and column. Loaded on demand (the config
// page imports it lazily), so the other pages do not carry CodeMirror.
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, hoverTooltip, keymap, lineNumbers } from '@codemirror/view';
import { bracketMatching, defaultHighlightStyle, foldGutter, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { autocompletion, completionKeymap, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { lintGutter, lintKeymap, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { yaml } from '@codemirror/lang-yaml';
import { unifiedMergeView } from '@codemirror/merge';
import schemaJson from '../../../config/lvsd.schema.json';
import { keyPathAt, placeAt } from './yaml-path.js';
import { hoverAt, keysAt, valuesAt, type JsonSchema } from './schema-walk.js';

const schema = schemaJson as JsonSchema;

export interface Problem {
  message: string;
  line?: number;
  column?: number;
}

function complete(ctx: CompletionContext): CompletionResult | null {
  const place = placeAt(ctx.state.doc.toString(), ctx.pos);
  if (place.prefix === '' && !ctx.explicit && place.kind === 'key') return null;
  if (place.kind === 'key') {
    const keys = keysAt(schema, place.path);
    if (keys.length === 0) return null;
    return {
      from: place.from,
      options: keys.map((k) => ({ label: k.name, type: 'property', detail: k.required ? 'required' : undefined, info: k.description, apply: `${k.name}: ` })),
      validFor: /^[A-Za-z0-9_$.-]*$/,
    };
  }
  const values = valuesAt(schema, [...place.path, place.key ?? '']);
  if (values.length === 0) return null;
  return { from: place.from, options: values.map((v) => ({ label: v, type: 'enum' })), validFor: /^[A-Za-z0-9_.-]*$/ };
}

const hover = hoverTooltip((view, pos) => {
  const path = keyPathAt(view.state.doc.toString(), pos);
  if (path === null) return null;
  const info = hoverAt(schema, path);
  if (info === null) return null;
  return {
    pos,
    above: true,
    create: () => {
      const dom = document.createElement('div');
      dom.className = 'cm-schema-hover';
      const title = dom.appendChild(document.createElement('strong'));
      title.textContent = info.title;
      const type = dom.appendChild(document.createElement('code'));
      type.textContent = ` ${info.type}`;
      if (info.description !== '') dom.appendChild(document.createElement('p')).textContent = info.description;
      return { dom };
    },
  };
});

/** A problem's place in the document: from its 1-based line and column to the end of that word (line 1 when it has none). */
export function problemRange(doc: EditorState['doc'], p: Problem): { from: number; to: number } {
  const line = doc.line(Math.min(Math.max(p.line ?? 1, 1), doc.lines));
  const from = Math.min(line.from + Math.max((p.column ?? 1) - 1, 0), line.to);
  const word = /^[^\s,:\]}]+/.exec(line.text.slice(from - line.from));
  return { from, to: word === null ? line.to : from + word[0].length };
}

/**
 * The panel's CSP allows no inline <style>; CodeMirror's styles (style-mod) use a constructed style sheet
 * instead when the editor lives in a shadow root. So each editor gets one; the page's CSS variables
 * inherit into it, and the look is given here, not in style.css.
 */
function shadowMount(host: HTMLElement): { parent: HTMLElement; root: ShadowRoot } {
  const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  root.replaceChildren();
  const parent = document.createElement('div');
  parent.style.height = '100%'; // CSSOM, not a style attribute: the CSP allows it
  root.appendChild(parent);
  return { parent, root };
}

const look = EditorView.theme({
  '&': { fontSize: '0.85rem', backgroundColor: 'var(--card)', color: 'var(--fg)' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '-2px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '.cm-tooltip': { backgroundColor: 'var(--card)', color: 'var(--fg)', border: '1px solid var(--line)', borderRadius: '6px' },
  '.cm-schema-hover': { maxWidth: '28rem', padding: '6px 8px', fontSize: '0.82rem', fontFamily: 'system-ui, sans-serif' },
  '.cm-schema-hover p': { margin: '4px 0 0' },
  '.cm-tooltip.cm-tooltip-autocomplete > ul': { fontFamily: 'var(--mono)' },
  '.cm-completionInfo': { maxWidth: '24rem', fontFamily: 'system-ui, sans-serif' },
});

function base(label: string): Extension[] {
  return [
    look,
    lineNumbers(),
    highlightActiveLineGutter(),
    foldGutter(),
    drawSelection(),
    highlightActiveLine(),
    indentOnInput(),
    bracketMatching(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    yaml(),
    EditorView.contentAttributes.of({ 'aria-label': label }),
    EditorState.tabSize.of(2),
  ];
}

export interface ConfigEditor {
  text(): string;
  setText(text: string): void;
  setProblems(problems: readonly Problem[]): void;
  /** Puts the cursor on a problem and scrolls it into view (a paste or an apply can leave it off screen). */
  reveal(problem: Problem): void;
  focus(): void;
  destroy(): void;
}

export function createConfigEditor(parent: HTMLElement, opts: { text: string; label: string; readOnly: boolean; onChange: (text: string) => void }): ConfigEditor {
  const view = new EditorView({
    ...shadowMount(parent),
    state: EditorState.create({
      doc: opts.text,
      extensions: [
        ...base(opts.label),
        history(),
        autocompletion({ override: [complete], icons: false }),
        hover,
        lintGutter(),
        EditorView.theme({ '&': { height: '100%' } }),
        EditorState.readOnly.of(opts.readOnly),
        // Escape, then Tab, leaves the editor (indentWithTab would otherwise trap keyboard users)
        keymap.of([...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap, indentWithTab]),
        EditorView.updateListener.of((u) => { if (u.docChanged) opts.onChange(u.state.doc.toString()); }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    setText(text) {
      if (text !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setProblems(problems) {
      const diagnostics: Diagnostic[] = problems.map((p) => ({ ...problemRange(view.state.doc, p), severity: 'error', message: p.message, source: 'lvsd' }));
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    reveal(problem) {
      const { from } = problemRange(view.state.doc, problem);
      view.dispatch({ selection: { anchor: from }, effects: EditorView.scrollIntoView(from, { y: 'center' }) });
      view.focus();
    },
    focus: () => { view.focus(); },
    destroy: () => { view.destroy(); },
  };
}

/** A read-only unified diff of the candidate against the running config: deleted lines shown inline, changes marked. */
export function createDiffView(parent: HTMLElement, running: string, candidate: string): { destroy: () => void } {
  const view = new EditorView({
    ...shadowMount(parent),
    state: EditorState.create({
      doc: candidate,
      extensions: [...base('Diff against the running config'), EditorView.theme({ '&': { maxHeight: '60vh' } }), EditorState.readOnly.of(true), EditorView.editable.of(false), unifiedMergeView({ original: running, mergeControls: false, gutter: true, collapseUnchanged: { margin: 3, minSize: 6 } })],
    }),
  });
  return { destroy: () => { view.destroy(); } };
}
