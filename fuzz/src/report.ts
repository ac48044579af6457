import { FAILURE_KINDS, type Counts, type Failure } from './tally.js';
import type { RunResult } from './runner.js';

/** The run as a table (readers and boundaries as rows), the first failure, then one JSON line. */
export function formatReport(result: RunResult): string {
  const rows = Object.entries(result.tally).sort(([a], [b]) => a.localeCompare(b));
  const columns: (keyof Counts)[] = ['tried', 'accepted', ...FAILURE_KINDS];
  const width = Math.max(20, ...rows.map(([name]) => name.length));
  const lines = [`${'reader / boundary'.padEnd(width)} ${columns.map((c) => c.padStart(14)).join('')}`];
  for (const [name, c] of rows) lines.push(`${name.padEnd(width)} ${columns.map((k) => c[k].toLocaleString('en-US').padStart(14)).join('')}`);
  lines.push('', `seed ${result.seed}, ${result.seconds.toFixed(1)} s, slow = over ${result.limitMs} ms: ${result.failures === 0 ? 'no failure' : `${result.failures} failure(s)`}`);
  if (result.first) lines.push(...describeFailure(result.first, result.seed));
  const json = { seed: result.seed, seconds: Number(result.seconds.toFixed(1)), limit_ms: result.limitMs, failures: result.failures, readers: result.tally, first: result.first ?? null };
  lines.push(JSON.stringify(json));
  return lines.join('\n');
}

export function describeFailure(f: Failure, seed: number): string[] {
  return [
    `first failure: ${f.reader}: ${f.kind}: ${f.detail}`,
    `  record ${f.target}, mutations ${f.mutations}, ${f.hex.length / 2} bytes`,
    `  hex ${f.hex}`,
    `  replay: npm run fuzz -- --seed ${seed} --replay ${f.path}`,
  ];
}
