import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The generated references (npm run docs:reference) against the source itself: a
// variable read or a metric registered in code that is missing from them means a
// declaration outside scripts/reference/sources.mjs, or docs not regenerated.
// Scope: what ships, packages/*/src and services/*/src (tests excluded); benchmarks,
// the demo and the dev scripts document their own variables where they read them.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const top of ['packages', 'services']) {
    for (const pkg of readdirSync(join(ROOT, top), { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue;
      const src = join(top, pkg.name, 'src');
      let entries: string[];
      try {
        entries = readdirSync(join(ROOT, src), { recursive: true }) as string[];
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (!/\.(ts|mts|js|mjs)$/.test(entry) || /\.test\.ts$|\.d\.ts$/.test(entry)) continue;
        files.push({ path: join(src, entry), text: readFileSync(join(ROOT, src, entry), 'utf8') });
      }
    }
  }
  return files;
}

const NAME = '[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*';

/** Every environment variable the source reads or declares, with one file it is in. */
function variablesInSource(files: { path: string; text: string }[]): { names: Map<string, string>; unresolved: string[] } {
  const names = new Map<string, string>();
  const unresolved: string[] = [];
  const constants = new Map<string, string>();
  for (const { text } of files) for (const m of text.matchAll(new RegExp(`\\bconst (\\w+)(?:: \\w+)? = '(${NAME})'`, 'g'))) constants.set(m[1]!, m[2]!);
  const add = (name: string, path: string) => names.has(name) || names.set(name, path);
  for (const { path, text } of files) {
    for (const m of text.matchAll(new RegExp(`\\bprocess\\.env\\.(${NAME})\\b|\\bprocess\\.env\\[['"](${NAME})['"]\\]|\\benv\\.(${NAME})\\b`, 'g'))) add((m[1] ?? m[2] ?? m[3])!, path);
    // A name held in a constant: process.env[WORKER_ENV].
    for (const m of text.matchAll(/\bprocess\.env\[(\w+)\]/g)) {
      const name = constants.get(m[1]!);
      if (name) add(name, path);
      else unresolved.push(`${path}: process.env[${m[1]}]`);
    }
    // The keys of an env declaration (ingestEnv = { INGEST_…: Type… }).
    if (/\b\w*[eE]nv(?:: \w+)? = \{/.test(text)) {
      for (const m of text.matchAll(new RegExp(`^\\s*(${NAME}):`, 'gm'))) add(m[1]!, path);
    }
  }
  return { names, unresolved };
}

/** Every metric name the source registers (banstream_…, in quotes). */
function metricsInSource(files: { path: string; text: string }[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const { path, text } of files) for (const m of text.matchAll(/['"`](banstream_[a-z0-9_]+)\b/g)) names.has(m[1]!) || names.set(m[1]!, path);
  return names;
}

/** The names in the first column of a reference's tables. */
function documented(file: string): Set<string> {
  const text = readFileSync(join(ROOT, 'docs/operations', file), 'utf8');
  return new Set([...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!));
}

const missingFrom = (names: Map<string, string>, docs: Set<string>) => [...names].filter(([name]) => !docs.has(name)).map(([name, path]) => `${name} (${path})`);

describe('generated operations references', () => {
  const files = sourceFiles();

  it('scans the source it means to', () => {
    expect(files.some((f) => f.path.endsWith(join('platform', 'src', 'config', 'env.ts')))).toBe(true);
    expect(files.some((f) => f.path.endsWith(join('aggregator', 'src', 'metrics.ts')))).toBe(true);
  });

  it('lists every environment variable read or declared in packages and services (else: npm run docs:reference)', () => {
    const { names, unresolved } = variablesInSource(files);
    expect(unresolved).toEqual([]);
    expect(names.size).toBeGreaterThan(80);
    expect(missingFrom(names, documented('configuration.md'))).toEqual([]);
  });

  it('lists every metric registered in packages and services (else: npm run docs:reference)', () => {
    const names = metricsInSource(files);
    expect(names.size).toBeGreaterThan(60);
    expect(missingFrom(names, documented('metrics.md'))).toEqual([]);
  });
});
