#!/usr/bin/env node
// The capacity and multi-region plan, computed from this project's own benchmark figures:
//
//   npm run capacity                                  the plan for 1e6 events/s, 1e7 bans, 3 regions
//   npm run capacity -- --events 2e6 --regions 2 --headroom 0.4
//   npm run capacity -- --markdown                    as docs/operations/capacity.md shows it
//   npm run capacity -- --figures docs                only docs/performance.md's figures
//
// Figures come from bench/results/NAME.json when present (the last `npm run bench`),
// else from docs/performance.md's table; the output names the source of each.
// scripts/capacity/plan.mjs holds the computation; docs/operations/capacity.md explains it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  computePlan,
  DEFAULT_ASSUMPTIONS,
  DEFAULT_TARGET,
  FALLBACK_FIGURES,
  FIGURES,
  figuresFromResults,
  figuresFromTable,
  mergeFigures,
  parseNumber,
  renderMarkdown,
  renderText,
} from './capacity/plan.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const TARGET_FLAGS = { '--events': 'events', '--bans': 'bans', '--regions': 'regions', '--headroom': 'headroom' };
const ASSUMPTION_FLAGS = Object.fromEntries(Object.entries(DEFAULT_ASSUMPTIONS).map(([name, spec]) => [spec.flag, name]));

function usage() {
  const flags = [...Object.keys(TARGET_FLAGS), ...Object.keys(ASSUMPTION_FLAGS)].join(' N, ');
  return `usage: npm run capacity -- [${flags} N] [--figures auto|results|docs] [--markdown]`;
}

function parseArgs(argv) {
  const target = { ...DEFAULT_TARGET };
  const assumptions = {};
  let figures = 'auto';
  let markdown = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const next = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`capacity: ${flag} needs a value\n${usage()}`);
      return v;
    };
    const number = () => {
      const text = next();
      const v = parseNumber(text);
      if (v === undefined) throw new Error(`capacity: ${flag} must be a number such as 1e6 or 1,000,000 (got ${JSON.stringify(text)})`);
      return v;
    };
    if (flag === '--markdown') markdown = true;
    else if (flag === '--figures') {
      figures = next();
      if (!['auto', 'results', 'docs'].includes(figures)) throw new Error(`capacity: --figures must be auto, results or docs (got ${figures})`);
    } else if (flag in TARGET_FLAGS) target[TARGET_FLAGS[flag]] = number();
    else if (flag in ASSUMPTION_FLAGS) assumptions[ASSUMPTION_FLAGS[flag]] = number();
    else if (flag === '--help' || flag === '-h') {
      console.log(usage());
      process.exit(0);
    } else throw new Error(`capacity: unknown argument ${arg}\n${usage()}`);
  }
  return { target, assumptions, figures, markdown };
}

function readResults() {
  const results = {};
  for (const bench of new Set(Object.values(FIGURES).map((f) => f.bench))) {
    const file = join(ROOT, 'bench', 'results', `${bench}.json`);
    if (!existsSync(file)) continue;
    const last = readFileSync(file, 'utf8').trim().split('\n').pop();
    try {
      results[bench] = JSON.parse(last);
    } catch (error) {
      throw new Error(`capacity: ${file} is not a benchmark result (${error.message})`);
    }
  }
  return results;
}

try {
  const { target, assumptions, figures: from, markdown } = parseArgs(process.argv.slice(2));
  const fromResults = from === 'docs' ? {} : figuresFromResults(readResults());
  if (from === 'results' && Object.keys(fromResults).length === 0) throw new Error('capacity: --figures results, but bench/results/ has none of the figures (run `npm run bench` first)');
  const fromDocs = from === 'results' ? {} : figuresFromTable(readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8'));
  const figures = mergeFigures(fromResults, fromDocs, FALLBACK_FIGURES);
  const plan = computePlan(target, figures, assumptions);
  const used =
    Object.keys(fromResults).length > 0
      ? `bench/results/ for ${Object.keys(fromResults).length} figures, the rest as each line says`
      : 'docs/performance.md (no bench/results/), and the fallbacks each line names';
  if (markdown) process.stdout.write(renderMarkdown(plan));
  else process.stdout.write(`${renderText(plan)}\nfigures from: ${used}\n`);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
