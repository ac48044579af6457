#!/usr/bin/env node
// The operations references, generated from the code's own definitions (built dist):
//
//   node scripts/reference.mjs          write docs/operations/configuration.md and metrics.md,
//                                       and the plan in docs/operations/capacity.md
//   node scripts/reference.mjs --check  exit 1, naming what differs, when they are out of date
//
// scripts/reference/sources.mjs lists the modules read; render.mjs turns them into Markdown.
// The capacity plan is computed from docs/performance.md's figures (scripts/capacity/plan.mjs)
// and replaces only the section between its markers.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIGURATION, METRICS, SERVICE_REGISTRY } from './reference/sources.mjs';
import { firstDifference, renderConfiguration, renderMetrics } from './reference/render.mjs';
import { computePlan, DEFAULT_TARGET, FALLBACK_FIGURES, figuresFromTable, mergeFigures, renderMarkdown, replaceSection } from './capacity/plan.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FILES = { configuration: 'docs/operations/configuration.md', metrics: 'docs/operations/metrics.md', capacity: 'docs/operations/capacity.md' };

async function load({ module, exported }) {
  let namespace;
  try {
    namespace = await import(module);
  } catch (error) {
    throw new Error(`cannot import ${module} (${error.message}); run \`npm run build\` first, or fix scripts/reference/sources.mjs`);
  }
  if (!(exported in namespace)) throw new Error(`${module} does not export ${exported}: fix scripts/reference/sources.mjs`);
  return namespace[exported];
}

/** What each metric factory registers, read back from a fresh registry. */
async function describeRegistry(registry) {
  const metrics = [];
  for (const metric of registry.getMetricsAsArray()) {
    const { type } = await metric.get();
    metrics.push({ name: metric.name, type, help: metric.help, labels: [...(metric.labelNames ?? [])] });
  }
  return metrics;
}

async function generate() {
  const declarations = [];
  for (const source of CONFIGURATION) declarations.push({ reader: source.reader, variables: await load(source) });
  const createRegistry = await load(SERVICE_REGISTRY);
  const sets = [];
  for (const { exposedBy, factories } of METRICS) {
    const registry = createRegistry(exposedBy, { defaultMetrics: false });
    // A factory that reads a value when scraped (supervisorMetrics) gets a stand-in.
    for (const source of factories) (await load(source))(registry, () => 0);
    sets.push({ exposedBy, metrics: await describeRegistry(registry) });
  }
  const processMetrics = await describeRegistry(createRegistry('reference'));
  return {
    [FILES.configuration]: renderConfiguration(declarations),
    [FILES.metrics]: renderMetrics(sets, processMetrics),
    [FILES.capacity]: capacityDocument(),
  };
}

/** docs/operations/capacity.md with its plan recomputed from the published figures (the default target). */
function capacityDocument() {
  const figures = mergeFigures(figuresFromTable(read('docs/performance.md')), FALLBACK_FIGURES);
  return replaceSection(read(FILES.capacity), renderMarkdown(computePlan(DEFAULT_TARGET, figures)));
}

function read(path) {
  try {
    return readFileSync(join(ROOT, path), 'utf8');
  } catch {
    return '';
  }
}

const files = await generate();
if (process.argv.includes('--check')) {
  const stale = [];
  for (const [path, text] of Object.entries(files)) {
    const diff = firstDifference(text, read(path));
    if (diff) stale.push(`  ${path}, line ${diff.line}:\n    code says:  ${diff.expected}\n    file says:  ${diff.actual}`);
  }
  if (stale.length > 0) {
    process.stderr.write(`docs:check: the generated references are out of date; run \`npm run docs:reference\` and commit:\n${stale.join('\n')}\n`);
    process.exit(1);
  }
  console.log(`docs:check: ok (${Object.keys(files).join(', ')})`);
} else {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ROOT, path)), { recursive: true });
    writeFileSync(join(ROOT, path), text);
    console.log(`wrote ${path}`);
  }
}
