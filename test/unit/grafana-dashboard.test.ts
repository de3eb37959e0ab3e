// contrib/grafana/lvsd-dashboard.json against what lvsd's /metrics really exports. Grafana is not in Debian,
// so the dashboard is not loaded into a Grafana here: instead every PromQL expression in it (panels,
// annotations, the service variable) is parsed, and each series it names, each label it selects or groups
// by, and each label its legend prints must be in a scrape of a running lvsd API (the real metrics module,
// over the fake director with traffic, a transition and health results).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { harness, WEB } from '../support/api-harness.js';

interface Target { expr: string; legendFormat?: string }
interface Panel { id: number; title: string; type: string; gridPos: object; targets: Target[] }
interface Dashboard {
  uid: string;
  panels: Panel[];
  annotations: { list: { expr: string; titleFormat: string }[] };
  templating: { list: { name: string; type: string; query: string | { query: string } }[] };
}

const dash = JSON.parse(readFileSync(new URL('../../../contrib/grafana/lvsd-dashboard.json', import.meta.url), 'utf8')) as Dashboard;

/** name → the label names its samples carry, from the text exposition format. */
function scrapeLabels(body: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of body.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? \S+$/.exec(line);
    if (m?.[1] === undefined) continue;
    const labels = out.get(m[1]) ?? new Set<string>();
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) if (l[1] !== undefined) labels.add(l[1]);
    out.set(m[1], labels);
  }
  return out;
}

test('every series, label and legend in the Grafana dashboard is one lvsd /metrics exports', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  h.director.tick(2);
  h.director.transition('VI_2', 'MASTER', 'master down timer expired');
  h.director.setHealth(WEB, '10.0.1.13:80', false, 'connect ECONNREFUSED');
  await h.call(await h.as('admin'), 'POST', '/api/v1/config/reload', {});
  const res = await h.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  const exported = scrapeLabels(res.body);
  assert.ok(exported.size > 10, 'the scrape has lvsd series');

  assert.ok(dash.panels.length >= 8 && dash.uid !== '');
  const exprs: { where: string; expr: string; legend: string }[] = [
    ...dash.panels.flatMap((p) => { assert.ok(p.targets.length > 0, `panel "${p.title}" has a query`); return p.targets.map((tg) => ({ where: `panel "${p.title}"`, expr: tg.expr, legend: tg.legendFormat ?? '' })); }),
    ...dash.annotations.list.map((a) => ({ where: 'annotation', expr: a.expr, legend: a.titleFormat })),
    ...dash.templating.list.filter((v) => v.type === 'query').map((v) => ({ where: `variable $${v.name}`, expr: typeof v.query === 'string' ? v.query : v.query.query, legend: '' })),
  ];
  let names = 0;
  for (const { where, expr, legend } of exprs) {
    const used = [...expr.matchAll(/\b(lvsd_[a-z0-9_]+)\b/g)].map((m) => m[1] ?? '');
    assert.ok(used.length > 0, `${where}: names no lvsd series: ${expr}`);
    const labelsOfExpr = new Set<string>();
    for (const name of used) {
      const labels = exported.get(name);
      assert.ok(labels !== undefined, `${where}: ${name} is not in lvsd's /metrics`);
      names++;
      for (const l of labels) labelsOfExpr.add(l);
    }
    // label matchers right after a series name, and the labels of by (…) / label_values(…, label)
    for (const m of expr.matchAll(/\b(lvsd_[a-z0-9_]+)\{([^}]*)\}/g)) {
      for (const l of (m[2] ?? '').matchAll(/([a-z_]+)\s*(?:=~|!=|!~|=)/g)) assert.ok(exported.get(m[1] ?? '')?.has(l[1] ?? ''), `${where}: ${m[1] ?? ''} has no label ${l[1] ?? ''}`);
    }
    for (const m of expr.matchAll(/\bby \(([^)]*)\)/g)) for (const l of (m[1] ?? '').split(',').map((s) => s.trim())) assert.ok(labelsOfExpr.has(l), `${where}: groups by ${l}, which its series do not carry`);
    for (const m of expr.matchAll(/label_values\(\s*(lvsd_[a-z0-9_]+)\s*,\s*([a-z_]+)\s*\)/g)) assert.ok(exported.get(m[1] ?? '')?.has(m[2] ?? ''), `${where}: ${m[1] ?? ''} has no label ${m[2] ?? ''}`);
    for (const m of legend.matchAll(/\{\{(\w+)\}\}/g)) assert.ok(labelsOfExpr.has(m[1] ?? ''), `${where}: the legend prints {{${m[1] ?? ''}}}, a label its series do not carry`);
  }
  t.diagnostic(`${exprs.length} expressions, ${names} series references, all in a scrape of ${exported.size} series`);
});

test('a typo in a dashboard query is caught (the check above can fail)', () => {
  const exported = scrapeLabels('lvsd_real_server_up{service="a",real_server="b"} 1\n');
  assert.equal(exported.get('lvsd_real_server_up')?.has('real_server'), true);
  assert.equal(exported.get('lvsd_real_server_upp'), undefined);
  assert.equal(exported.get('lvsd_real_server_up')?.has('realServer'), false);
});
