#!/usr/bin/env node
// Validates docker-compose.yml without a Docker engine.
//
//   node scripts/compose-check.mjs [--require-cli] [--file F] [--project-dir D]
//
// 1. If a Compose CLI is installed (`docker compose` v2, or `docker-compose` v1,
//    e.g. Debian's package), runs `config -q`: the CLI's own schema and
//    interpolation check. `config` only parses, so no engine is needed.
//    --require-cli (or COMPOSE_CHECK_REQUIRE_CLI=1) makes a missing CLI an error,
//    for CI machines where it is supposed to be installed.
// 2. If the `yaml` package is installed, checks what a schema cannot: references
//    between services, files the stack mounts, loopback-only ports, build args
//    against the Dockerfile, and that Prometheus scrapes the ports the services
//    listen on. Values are interpolated with their ${VAR:-default} defaults only,
//    never the caller's environment, so the result is the same on every machine.
//
// Prints every problem found, then exits 1; prints `compose-check: ok (N services)`
// and exits 0 when there are none.
//
// This file reads the arguments, runs the checks in order and prints; the checks
// themselves live in scripts/compose-check/ and return lists of problems.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkRequiredServices } from './compose-check/banstream.mjs';
import { checkWithCli } from './compose-check/cli.mjs';
import { checkDependencyCycles } from './compose-check/dependencies.mjs';
import { checkGrafana } from './compose-check/grafana.mjs';
import { interpolateCompose } from './compose-check/interpolate.mjs';
import { isMap, stackOf } from './compose-check/model.mjs';
import { checkPrometheus } from './compose-check/prometheus.mjs';
import { checkServices } from './compose-check/services.mjs';
import { checkTopLevelKeys } from './compose-check/spec.mjs';
import { loadYaml, yamlReader } from './compose-check/yaml.mjs';

// ---------------------------------------------------------------- arguments

const argv = process.argv.slice(2);
function option(name) {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--')) fail([`${name} needs a value`]);
  return value;
}
for (const arg of argv) {
  if (arg.startsWith('--') && !['--require-cli', '--file', '--project-dir', '--help'].includes(arg)) {
    fail([`unknown option ${arg} (known: --require-cli, --file F, --project-dir D)`]);
  }
}
if (argv.includes('--help')) {
  console.log('usage: node scripts/compose-check.mjs [--require-cli] [--file docker-compose.yml] [--project-dir DIR]');
  process.exit(0);
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const composeFile = path.resolve(option('--file') ?? path.join(repoRoot, 'docker-compose.yml'));
// Compose resolves relative paths against the project directory: the file's own
// folder unless told otherwise.
const projectDir = path.resolve(option('--project-dir') ?? path.dirname(composeFile));
const requireCli = argv.includes('--require-cli') || process.env.COMPOSE_CHECK_REQUIRE_CLI === '1';

function fail(problems) {
  console.error(`compose-check: FAILED (${problems.length} problem${problems.length === 1 ? '' : 's'})`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
function note(message) {
  console.error(`compose-check: ${message}`);
}
function rel(p) {
  const r = path.relative(projectDir, p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
}

if (!existsSync(composeFile)) fail([`${rel(composeFile)} does not exist`]);

// ---------------------------------------------------------------- 1. Compose CLI

const cliStep = checkWithCli({ composeFile, projectDir, requireCli });
for (const message of cliStep.notes) note(message);
const problems = [...cliStep.problems];

// ---------------------------------------------------------------- 2. structural checks

const YAML = await loadYaml();
if (!YAML) {
  if (!cliStep.cli) fail([...problems, 'cannot validate anything: neither the `yaml` npm package (run `npm ci`) nor a Compose CLI is installed']);
  note('the `yaml` package is not installed (run `npm ci`); skipping structural checks');
  if (problems.length > 0) fail(problems);
  console.log(`compose-check: ok (${cliStep.serviceCount ?? '?'} services)`);
  process.exit(0);
}
const ctx = { projectDir, rel, readYaml: yamlReader(YAML, rel) };

const [raw, parseProblems] = ctx.readYaml(composeFile, 'compose');
problems.push(...parseProblems);
if (raw === undefined) fail(problems);
if (!isMap(raw)) fail([...problems, `${rel(composeFile)} must be a mapping with a services key`]);

const [compose, interpolationProblems] = interpolateCompose(raw);
problems.push(...interpolationProblems, ...checkTopLevelKeys(compose));
if (!isMap(compose.services) || Object.keys(compose.services).length === 0) fail([...problems, '`services:` is missing or empty']);
const stack = stackOf(compose);

problems.push(...checkRequiredServices(stack.serviceNames));
const perService = checkServices(stack, ctx);
problems.push(...perService.problems, ...checkDependencyCycles(stack));
for (const v of perService.unusedVolumes) note(`warning: top-level volume \`${v}\` is not used by any service`);

// Mounted configuration: Prometheus scrapes what the services serve, Grafana
// points at a service of this file.
problems.push(...checkPrometheus(stack, ctx), ...checkGrafana(stack, ctx));

if (problems.length > 0) fail(problems);
console.log(`compose-check: ok (${stack.serviceNames.size} services)`);
