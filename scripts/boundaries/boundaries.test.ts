import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The repository's own boundary rules run on a small fixture tree laid out like the
// repository, each file breaking (or keeping) one rule: the check must name the rule.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

const fixture: Record<string, string> = {
  'package.json': JSON.stringify({ private: true, workspaces: ['schemas', 'packages/*', 'services/*'] }),
  'node_modules/kafkajs/package.json': JSON.stringify({ name: 'kafkajs', main: 'index.js' }),
  'node_modules/kafkajs/index.js': 'exports.Kafka = class {};\n',
  'node_modules/fastify/package.json': JSON.stringify({ name: 'fastify', main: 'index.js' }),
  'node_modules/fastify/index.js': 'module.exports = () => ({});\n',
  'services/aggregator/package.json': JSON.stringify({
    name: '@banstream/aggregator',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './engine': { default: './dist/engine/index.js' } },
  }),
  'services/aggregator/src/index.ts': 'export const aggregator = 1;\n',
  'services/aggregator/src/engine/index.ts': 'export const engine = 1;\n',
  'services/aggregator/src/own.ts': "import { engine } from './engine/index.js';\nexport const own = engine;\n",
  'services/control/src/uses-aggregator.ts': "import { aggregator } from '@banstream/aggregator';\nexport const x = aggregator;\n",
  'services/control/src/uses-engine.ts': "import { engine } from '../../aggregator/src/engine/index.js';\nexport const y = engine;\n",
  'services/enforcer/src/uses-kafkajs.ts': "import type { Kafka } from 'kafkajs';\nexport type K = Kafka;\n",
  'packages/kafka/package.json': JSON.stringify({ name: '@banstream/kafka', exports: { '.': { default: './dist/index.js' } } }),
  'packages/kafka/src/index.ts': "import { Kafka } from 'kafkajs';\nexport const client = Kafka;\n",
  'packages/cli/src/uses-fastify.ts': "import fastify from 'fastify';\nexport const f = fastify;\n",
  'packages/edge/src/uses-service.ts': "import { engine } from '@banstream/aggregator/engine';\nexport const z = engine;\n",
  'packages/edge/src/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
  'packages/edge/src/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
  'packages/core/src/reads-files.ts': "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
  'packages/core/src/pure.ts': 'export const pure = 1;\n',
  'packages/engine/src/uses-platform.ts': "import { x } from '../../platform/src/index.js';\nexport const e = x;\n",
  'packages/platform/src/index.ts': 'export const x = 1;\n',
  'services/aggregator/src/service.ts': "import { own } from './own.js';\nexport const service = own;\n",
  'services/aggregator/src/main.ts': "import { service } from './service.js';\nexport const main = service;\n",
  'services/aggregator/src/stages/back.ts': "import { service } from '../service.js';\nexport const back = service;\n",
  'services/ingest/src/http/route.ts': "import { check } from '../events/check.js';\nexport const route = check;\n",
  'services/ingest/src/events/check.ts': 'export const check = 1;\n',
  'services/ingest/src/events/uses-http.ts': "import { route } from '../http/route.js';\nexport const u = route;\n",
  'schemas/src/index.ts': "import { pure } from '../../packages/core/src/pure.js';\nexport const schema = pure;\n",
};

/** One line of the check's report: `  error <rule>: <from> → <to>` (a cycle goes on over lines). */
interface Violation {
  rule: string;
  from: string;
  to: string;
}

let dir: string;
let report: string;
let violations: Violation[];
let exitCode: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'banstream-boundaries-'));
  for (const [path, text] of Object.entries(fixture)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.base.json', 'scripts/boundaries/workspace-resolve.cjs']) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(root, file), join(dir, file));
  }
  // The arguments of `npm run boundaries`, its default report and exit status.
  const args = [depcruise, '--config', '.dependency-cruiser.cjs', 'schemas', 'packages', 'services'];
  ({ report, exitCode } = await new Promise<{ report: string; exitCode: number }>((resolve, reject) => {
    execFile(process.execPath, args, { cwd: dir }, (error, stdout, stderr) => {
      const code = error ? error.code : 0;
      if (typeof code !== 'number' || /ERROR:/.test(stderr)) reject(new Error(`dependency-cruiser did not run: ${stderr}`));
      else resolve({ report: stdout, exitCode: code });
    });
  }));
  violations = [...report.matchAll(/^\s+error ([\w-]+): (\S+) →\s+(\S+)/gm)].map(([, rule, from, to]) => ({ rule: rule!, from: from!, to: to! }));
}, 30_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const firing = (from: string) =>
  violations
    .filter((v) => v.from === from)
    .map((v) => v.rule)
    .sort();

describe('npm run boundaries (dependency-cruiser)', () => {
  it('fails the run: the exit status counts the violations', () => {
    expect(violations.length).toBeGreaterThan(0);
    expect(exitCode).toBe(violations.length);
    expect(report).toContain(`${violations.length} dependency violations`);
  });

  it('catches a service importing another, by workspace name or by path', () => {
    expect(firing('services/control/src/uses-aggregator.ts')).toEqual(['no-service-to-service']);
    expect(violations.find((v) => v.from === 'services/control/src/uses-aggregator.ts')?.to).toBe('services/aggregator/src/index.ts');
    expect(firing('services/control/src/uses-engine.ts')).toEqual(['no-service-to-service']);
  });

  it('catches kafkajs outside packages/kafka, type-only imports included, and lets the port use it', () => {
    expect(firing('services/enforcer/src/uses-kafkajs.ts')).toEqual(['kafkajs-only-in-port']);
    expect(firing('packages/kafka/src/index.ts')).toEqual([]);
  });

  it('keeps the CLI off servers, packages off services, core off I/O, and finds cycles', () => {
    expect(firing('packages/cli/src/uses-fastify.ts')).toEqual(['cli-no-service']);
    expect(firing('packages/edge/src/uses-service.ts')).toEqual(['packages-no-service']);
    expect(firing('packages/core/src/reads-files.ts')).toEqual(['core-no-io']);
    expect(firing('packages/edge/src/a.ts')).toEqual(['no-circular']);
    expect(firing('packages/engine/src/uses-platform.ts')).toEqual(['engine-pure']);
  });

  it('keeps the paths forward: nothing comes back into service.ts, events/ never reaches http/', () => {
    expect(firing('services/aggregator/src/stages/back.ts')).toEqual(['forward-flow']);
    expect(firing('services/aggregator/src/main.ts')).toEqual([]);
    expect(firing('services/ingest/src/events/uses-http.ts')).toEqual(['ingest-events-before-http']);
    expect(firing('services/ingest/src/http/route.ts')).toEqual([]);
  });

  it('passes what keeps to the rules', () => {
    for (const clean of ['services/aggregator/src/own.ts', 'packages/core/src/pure.ts', 'schemas/src/index.ts']) expect(firing(clean)).toEqual([]);
    expect(violations.map((v) => v.rule)).not.toContain('not-to-unresolvable');
  });
});
