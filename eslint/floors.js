// lvsd's house rules for imports, as an ESLint plugin (plain JS: eslint.config.js loads it as it is).
//   lvsd/floors:   imports in daemon/ run down the floors (DESIGN.md "Floors"), never up;
//   lvsd/no-cycle: no file in daemon/ takes part in an import circle (type-only imports count too: a circle of
//                  types still ties the rooms together).
// Both read import specifiers only; a relative one is resolved against the importing file ('.js' → '.ts').
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** cli > api > director > config > dataplane, vrrp, systemd, bgp > ipvs, health, alerts, state, net. */
export const FLOORS = {
  cli: 5,
  api: 4,
  director: 3,
  config: 2,
  dataplane: 1, vrrp: 1, systemd: 1, bgp: 1,
  ipvs: 0, health: 0, alerts: 0, state: 0, net: 0,
};
/** Files directly in daemon/ (log.ts): leaves every floor may use. */
const ROOT_FLOOR = -1;

/** The daemon/ folder a file lives under, or null. */
function daemonRoot(file) {
  const parts = resolve(file).split(sep);
  const i = parts.lastIndexOf('daemon');
  return i < 0 ? null : parts.slice(0, i + 1).join(sep);
}

/** The room ("director", …) of a file under `root`, '' for a file directly in it, null outside. */
function roomOf(root, file) {
  const rel = relative(root, file);
  if (rel.startsWith('..')) return null;
  const parts = rel.split(sep);
  return parts.length === 1 ? '' : parts[0];
}

function floorOf(room) {
  return room === '' ? ROOT_FLOOR : FLOORS[room];
}

/** './x.js' from `file` → the .ts file it means (or the path as written when it is not TypeScript). */
function resolveSpecifier(file, spec) {
  if (!spec.startsWith('.')) return null;
  const p = resolve(dirname(file), spec);
  return p.endsWith('.js') ? `${p.slice(0, -3)}.ts` : p;
}

function specifiersOf(node) {
  if ((node.type === 'ImportDeclaration' || node.type === 'ExportNamedDeclaration' || node.type === 'ExportAllDeclaration') && node.source) return node.source;
  if (node.type === 'ImportExpression' && node.source.type === 'Literal' && typeof node.source.value === 'string') return node.source;
  return null;
}

const floors = {
  meta: { type: 'problem', docs: { description: 'imports in daemon/ run down the floors only' }, schema: [] },
  create(context) {
    const file = context.filename;
    const root = daemonRoot(file);
    if (root === null) return {};
    const from = roomOf(root, file);
    const check = (node) => {
      const src = specifiersOf(node);
      if (src === null) return;
      const target = resolveSpecifier(file, String(src.value));
      if (target === null) return;
      const to = roomOf(root, target);
      if (to === null || to === from) return;
      const ff = floorOf(from);
      const ft = floorOf(to);
      if (ff === undefined) context.report({ node: src, message: `daemon/${from}/ has no floor: add it to FLOORS in eslint/floors.js (and to DESIGN.md's floors)` });
      else if (ft === undefined) context.report({ node: src, message: `daemon/${to}/ has no floor: add it to FLOORS in eslint/floors.js (and to DESIGN.md's floors)` });
      else if (ft > ff) context.report({ node: src, message: `an upward import: ${from || 'daemon'} (floor ${ff}) may not import from ${to} (floor ${ft}); imports run cli > api > director > config > dataplane, vrrp, systemd, bgp > ipvs, health, alerts, state, net` });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

// ---- circles -------------------------------------------------------------------------------------------

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

function tsFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Import graph of every .ts file under `root` and its strongly connected components (Tarjan). */
function analyse(root) {
  const graph = new Map();
  for (const f of tsFiles(root)) {
    const text = readFileSync(f, 'utf8');
    const deps = new Set();
    for (const m of text.matchAll(IMPORT_RE)) {
      const target = resolveSpecifier(f, m[1] ?? m[2] ?? m[3]);
      if (target !== null && existsSync(target)) deps.add(target);
    }
    graph.set(f, deps);
  }
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const component = new Map();
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const members = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        members.push(w);
      } while (w !== v);
      const circle = members.length > 1 || (graph.get(v)?.has(v) ?? false) ? members : null;
      for (const m of members) component.set(m, circle);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return { graph, component };
}

/** One analysis per daemon/ folder and lint run (the rule sees every file of the run against the same graph). */
const analyses = new Map();

const noCycle = {
  meta: { type: 'problem', docs: { description: 'no import circles in daemon/' }, schema: [] },
  create(context) {
    const file = resolve(context.filename);
    const root = daemonRoot(file);
    if (root === null) return {};
    let a = analyses.get(root);
    if (a === undefined) {
      a = analyse(root);
      analyses.set(root, a);
    }
    const circle = a.component.get(file) ?? null;
    if (circle === null) return {};
    const names = circle.map((m) => relative(root, m)).sort();
    const check = (node) => {
      const src = specifiersOf(node);
      if (src === null) return;
      const target = resolveSpecifier(file, String(src.value));
      if (target !== null && circle.includes(target)) {
        context.report({ node: src, message: `an import circle: ${names.join(' → ')} (move what both need to a file on the lower floor)` });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { meta: { name: 'lvsd' }, rules: { floors, 'no-cycle': noCycle } };
