import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureDebianPackage } from '../scripts/stack/index.mjs';
import { REPO_ROOT } from './support/processes.js';

const RULES = join(REPO_ROOT, 'infra/prometheus/rules/banstream.yml');
const RULE_TESTS = join(REPO_ROOT, 'infra/prometheus/rules/banstream.test.yml');
const DASHBOARD = join(REPO_ROOT, 'infra/grafana/dashboards/banstream.json');

/** Every metric name the services register (`name: 'banstream_…'` in their metrics files). */
function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  for (const service of ['aggregator', 'enforcer']) {
    const source = readFileSync(join(REPO_ROOT, `services/${service}/src/metrics.ts`), 'utf8');
    for (const m of source.matchAll(/name: '(banstream_[a-z_]+)'/g)) names.add(m[1]!);
  }
  return names;
}

const metricsIn = (expr: string) => [...expr.matchAll(/\b(banstream_[a-z_]+)\b/g)].map((m) => m[1]!);

/** The Prometheus alerting rules and the Grafana dashboard we ship, checked with Debian's promtool. */
describe('Prometheus rules and Grafana dashboard', () => {
  beforeAll(() => ensureDebianPackage('promtool', 'prometheus', (line) => console.log(`[promtool] ${line}`)), 300_000);

  const promtool = (...args: string[]) => execFileSync('promtool', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  it('passes promtool check rules', () => {
    expect(promtool('check', 'rules', RULES)).toMatch(/SUCCESS: 5 rules found/);
  });

  it('fires on what the aggregator reports, and only then (promtool test rules)', () => {
    expect(promtool('test', 'rules', RULE_TESTS)).toMatch(/SUCCESS/);
  });

  it('names only metrics the services export, in the rules and in every dashboard query', () => {
    const known = registeredMetrics();
    const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[]; templating: { list: { definition: string }[] } };
    const used = [
      ...rules.groups.flatMap((g) => g.rules.flatMap((r) => metricsIn(r.expr))),
      ...dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricsIn(t.expr))),
      ...dashboard.templating.list.flatMap((v) => metricsIn(v.definition)),
    ];
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((m) => !known.has(m))).toEqual([]);
  });

  it('provisions the dashboard against the provisioned data source, on a 24-column grid', () => {
    const datasources = parse(readFileSync(join(REPO_ROOT, 'infra/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as { datasources: { uid: string }[] };
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: { title: string; datasource?: { uid: string }; gridPos: { x: number; w: number } }[] };
    expect(dashboard.uid).toBe('banstream');
    const uids = new Set(datasources.datasources.map((d) => d.uid));
    for (const p of dashboard.panels) {
      if (p.datasource) expect(uids.has(p.datasource.uid), p.title).toBe(true);
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    }
    const titles = dashboard.panels.map((p) => p.title);
    for (const wanted of ['Requests per country', 'Bans per policy', 'Hottest subject per policy', 'Geographic alerts']) expect(titles).toContain(wanted);
  });
});
