#!/usr/bin/env node
// `npm start`: the whole pipeline on this machine. Starts the local Kafka and Redis
// (unless already up), creates the topics, starts ingest, aggregator, enforcer and
// control with labelled logs, and on Ctrl-C (or `npm run stop`) stops everything it
// started. The control API gets a local admin token (scripts/run/control-token.mjs); the
// ingest gateway, on 127.0.0.1, accepts anonymous edges unless INGEST_EDGE_TOKENS is given.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './stack/settings.mjs';
import { stackDown, stackSettings, stackStatus, stackUp } from './stack/index.mjs';
import { formatLine } from './run/log-format.mjs';
import { localControlToken } from './run/control-token.mjs';
import { serviceNodeFlags } from './run/node-flags.mjs';

const SERVICES = [
  { name: 'ingest', port: Number(process.env.BANSTREAM_INGEST_PORT ?? 8080) },
  { name: 'aggregator', port: Number(process.env.BANSTREAM_AGGREGATOR_PORT ?? 8081) },
  { name: 'enforcer', port: Number(process.env.BANSTREAM_ENFORCER_PORT ?? 8082) },
  { name: 'control', port: Number(process.env.BANSTREAM_CONTROL_PORT ?? 8083) },
];
const STOP_GRACE_MS = 15_000;

const say = (line) => console.log(formatLine('run', line));
const settings = stackSettings();
const runFile = join(settings.dir, 'run.json');
const children = new Map();
let stopping = false;
let stackWasRunning = false;

async function main() {
  const before = stackStatus(settings);
  stackWasRunning = before.kafka.startsWith('running') && before.redis.startsWith('running');
  const connection = await stackUp(settings, (l) => console.log(formatLine('stack', l)));
  const env = { ...process.env, ...connection, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' };
  // Tokens given by the caller win; otherwise the control API gets the local admin token's hash.
  const ownTokens = env.CONTROL_TOKENS === undefined && env.CONTROL_TOKENS_FILE === undefined;
  const control = ownTokens ? localControlToken(settings.dir) : undefined;
  if (control) env.CONTROL_TOKENS_FILE = control.tokensFile;
  // The gateway listens on this machine only (HTTP_HOST defaults to 127.0.0.1): a local run takes
  // events without an edge token unless the caller gives tokens. A deployment sets INGEST_EDGE_TOKENS.
  const anonymousEdges = env.INGEST_EDGE_TOKENS === undefined && env.INGEST_ALLOW_ANONYMOUS_EDGES === undefined;
  if (anonymousEdges) env.INGEST_ALLOW_ANONYMOUS_EDGES = 'true';
  // The console's Overview reads the local aggregator's and enforcer's metrics (events/s, denials by source).
  if (env.CONTROL_CONSOLE_METRICS_URLS === undefined) {
    env.CONTROL_CONSOLE_METRICS_URLS = SERVICES.filter((s) => s.name === 'aggregator' || s.name === 'enforcer')
      .map((s) => `http://127.0.0.1:${s.port}`)
      .join(',');
  }

  const topics = spawnSync(process.execPath, [join(REPO_ROOT, 'packages/kafka/dist/cli/create-topics.js')], { env, encoding: 'utf8' });
  for (const line of `${topics.stdout}${topics.stderr}`.split('\n').filter(Boolean)) console.log(formatLine('topics', line));
  if (topics.status !== 0) throw new Error('creating the topics failed (see above)');

  for (const service of SERVICES) startService(service, env);
  writeFileSync(runFile, JSON.stringify({ pid: process.pid, services: Object.fromEntries([...children].map(([n, c]) => [n, c.pid])) }));
  // A service that exits while starting stops everything (startService): never claim "up" then.
  if (!(await waitReady())) return;
  say(`banstream is up: ${SERVICES.map((s) => `${s.name} http://127.0.0.1:${s.port}`).join('  ')}`);
  say(`KAFKA_BROKERS=${connection.KAFKA_BROKERS} REDIS_URL=${connection.REDIS_URL}    Ctrl-C stops everything`);
  const controlPort = SERVICES.find((s) => s.name === 'control').port;
  if (anonymousEdges) say('the ingest gateway accepts events without an edge token (INGEST_ALLOW_ANONYMOUS_EDGES=true for this local run; set INGEST_EDGE_TOKENS to require them)');
  if (control) say(`console: http://127.0.0.1:${controlPort}/console/ (sign in with the token in ${control.tokenFile})`);
  if (control) say(`CLI: export BANSTREAM_URL=http://127.0.0.1:${controlPort} BANSTREAM_TOKEN_FILE=${control.tokenFile}; npx banstream --help`);
}

function startService({ name, port }, env) {
  const child = spawn(process.execPath, [...serviceNodeFlags(name), join(REPO_ROOT, `services/${name}/dist/main.js`)], {
    env: { ...env, HTTP_PORT: String(port), SERVICE_NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal's Ctrl-C reaches only this runner, which then
    // stops the services in order instead of all of them racing on the same signal.
    detached: true,
  });
  children.set(name, child);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => console.log(formatLine(name, line)));
  }
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      say(`${name} exited unexpectedly (${code ?? signal}); stopping everything`);
      void shutdown(1);
    }
  });
}

/** Resolves true once every service is ready, false if the run is stopping instead. */
async function waitReady() {
  const deadline = Date.now() + 60_000;
  for (const { name, port } of SERVICES) {
    for (;;) {
      if (stopping) return false;
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`${name} did not report ready on http://127.0.0.1:${port}/readyz within 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return !stopping;
}

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  say('stopping services ...');
  await Promise.all([...children].map(([name, child]) => stopChild(name, child)));
  if (!stackWasRunning) {
    const result = await stackDown(settings);
    say(`stack: kafka ${result.kafka}, redis ${result.redis}`);
  } else {
    say('the stack was already running before `npm start`: left up (npm run stack:down stops it)');
  }
  rmSync(runFile, { force: true });
  say('stopped');
  process.exit(exitCode);
}

function stopChild(name, child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => {
      say(`${name} did not stop within ${STOP_GRACE_MS / 1000} s: killing it`);
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
main().catch(async (error) => {
  say(`start failed: ${error.message}`);
  await shutdown(1);
});
