import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry, Registry } from '@banstream/platform';
import { REPO_ROOT } from './support/processes.js';

/**
 * No metric label may carry a subject, an address, a user id or any other value an
 * attacker chooses: each distinct value is a series, so such a label lets anyone grow
 * Prometheus (and banstream's memory) without bound, and puts personal data in the
 * monitoring. Labels must be bounded sets: policy ids, reason codes, countries, stages.
 * Pure: no broker is used (it lives under test/ because it reads every workspace).
 */

/** Words that, as a label name or a part of one (`client_ip`), mean an unbounded value. */
const DENIED = new Set([
  'subject',
  'ip',
  'ips',
  'addr',
  'address',
  'cidr',
  'network',
  'prefix',
  'user',
  'userid',
  'uid',
  'username',
  'email',
  'account',
  'login',
  'apikey',
  'api',
  'key',
  'token',
  'session',
  'cookie',
  'header',
  'headers',
  'agent',
  'useragent',
  'host',
  'hostname',
  'path',
  'url',
  'uri',
  'route',
  'query',
  'referer',
  'referrer',
  'client',
  'id',
  'event',
  'edge',
]);

function deniedLabels(registry: Registry): string[] {
  return registry.getMetricsAsArray().flatMap((metric) => {
    const labels = (metric as unknown as { labelNames?: readonly string[]; name: string }).labelNames ?? [];
    return labels
      .filter((l) =>
        l
          .toLowerCase()
          .split(/[_\-.]/)
          .some((word) => DENIED.has(word)),
      )
      .map((l) => `${(metric as unknown as { name: string }).name}{${l}}`);
  });
}

/** Every non-test source file of every workspace. */
function sources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const group of ['packages', 'services']) {
    for (const workspace of readdirSync(join(REPO_ROOT, group))) {
      try {
        walk(join(REPO_ROOT, group, workspace, 'src'));
      } catch {
        // a folder without src/ (none today) has no metrics
      }
    }
  }
  return files;
}

const METRIC_HELPERS = join(REPO_ROOT, 'packages/platform/src/metrics/registry.ts');
const factoryFiles = () => sources().filter((f) => f.endsWith('/metrics.ts'));

describe('metric labels are bounded sets', () => {
  it('defines labelled metrics only in metrics.ts factories, so the check below sees every one', () => {
    const elsewhere = sources().filter((f) => f !== METRIC_HELPERS && !f.endsWith('/metrics.ts') && /\blabelNames\b/.test(readFileSync(f, 'utf8')));
    expect(elsewhere.map((f) => relative(REPO_ROOT, f))).toEqual([]);
    // What the services have today, so a factory moved or renamed is noticed here.
    expect(
      factoryFiles()
        .map((f) => relative(REPO_ROOT, f))
        .sort(),
    ).toEqual([
      'packages/edge/src/metrics.ts',
      'packages/kafka/src/metrics.ts',
      'packages/platform/src/service/workers/metrics.ts',
      'services/aggregator/src/metrics.ts',
      'services/control/src/metrics.ts',
      'services/enforcer/src/hard/metrics.ts',
      'services/enforcer/src/metrics.ts',
      'services/ingest/src/metrics.ts',
    ]);
  });

  it('no metric of any service factory, nor the process metrics, has a subject, IP, user, key, path, header or host label', async () => {
    const registries: [string, Registry][] = [['process metrics', createMetricsRegistry('svc')]];
    for (const file of factoryFiles()) {
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const factories = Object.entries(module).filter(([name, value]) => typeof value === 'function' && /Metrics$/.test(name));
      expect(factories.length, relative(REPO_ROOT, file)).toBeGreaterThan(0);
      for (const [name, factory] of factories) {
        const registry = new Registry();
        (factory as (r: Registry) => unknown)(registry);
        expect(registry.getMetricsAsArray().length, name).toBeGreaterThan(0);
        registries.push([name, registry]);
      }
    }
    expect(registries.map(([name]) => name).sort()).toEqual([
      'aggregatorMetrics',
      'controlMetrics',
      'edgeMetrics',
      'enforcerMetrics',
      'feedMetrics',
      'hardLimitMetrics',
      'ingestMetrics',
      'process metrics',
      'supervisorMetrics',
    ]);
    expect(registries.flatMap(([name, registry]) => deniedLabels(registry).map((l) => `${name}: ${l}`))).toEqual([]);
  });

  it('the check itself finds such a label', () => {
    const registry = new Registry();
    counter(registry, { name: 'banstream_example_total', help: 'x', labelNames: ['policy', 'subject'] });
    counter(registry, { name: 'banstream_other_total', help: 'x', labelNames: ['client_ip', 'reason'] });
    expect(deniedLabels(registry)).toEqual(['banstream_example_total{subject}', 'banstream_other_total{client_ip}']);
  });
});
