// The sidecar's HTTP checks compared between builds, all running at once, taking turns:
//   node --import tsx bench/compare/enforcer-http.mjs ROUNDS ROOT_A ROOT_B [ROOT_C…]
// (`npm run stack:up` first; KAFKA_BROKERS and REDIS_URL as for the benchmarks.)
// Each ROOT's enforcer runs from its own checkout (its own node flags), with the same
// Kafka/Redis env; a hello-world Fastify is the ceiling. Every round loads the
// hello-world then each sidecar (order rotated) for 2 s with 32 connections
// (autocannon, as bench/enforcer/http.ts); per-round ratios to the first build.
// Each round also reads the sidecar's CPU time (/proc/PID/stat) around its load:
// CPU µs per check moves less than checks/s when the machine is shared (the client,
// the broker and the sidecar share two cores, so a sidecar waits on the others).
// ENFORCER_BATCH_ANSWERS=false compares the sidecars answering each check on its own
// (the benchmark's http_unbatched_* figures).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { cpuMicros, median } from '../lib.js';
import { waitReady } from '../enforcer/http.js';
const require = createRequire(import.meta.url);
const autocannon = require('autocannon');

const [roundsArg, ...rootArgs] = process.argv.slice(2);
const roots = rootArgs.map((r) => resolve(r));
const ROUNDS = Number(roundsArg);
const env = {
  PATH: process.env.PATH,
  KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:19092',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:16379',
  TOPIC_PREFIX: `bench-ab-${Date.now()}.`,
  TOPIC_PARTITIONS: '3',
  LOG_LEVEL: 'warn',
  ...(process.env.ENFORCER_BATCH_ANSWERS === undefined ? {} : { ENFORCER_BATCH_ANSWERS: process.env.ENFORCER_BATCH_ANSWERS }),
};
const freePort = () =>
  new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
const HELLO = `import Fastify from 'fastify'; const app = Fastify({ logger: false }); app.post('/v1/check', async () => ({ allowed: true, status: 200, source: 'none', reason: 'hello' })); await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });`;
const children = [];
const load = (url, body, duration) =>
  new Promise((resolve, reject) =>
    autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json' }, connections: 32, duration }, (err, r) =>
      err
        ? reject(err)
        : r.non2xx || r.errors
          ? reject(new Error(`${url}: ${r.non2xx} non-2xx ${r.errors} errors`))
          : resolve({ perS: r.requests.average, meanMs: r.latency.average, p99Ms: r.latency.p99 }),
    ),
  );
try {
  const targets = [];
  const helloPort = await freePort();
  children.push(spawn(process.execPath, ['--input-type=module', '-e', HELLO], { cwd: new URL('../..', import.meta.url).pathname, env: { PATH: env.PATH, PORT: String(helloPort) }, stdio: 'inherit' }));
  for (const root of roots) {
    const port = await freePort();
    const { serviceNodeFlags } = await import(pathToFileURL(`${root}/scripts/run/node-flags.mjs`).href);
    children.push(
      spawn(process.execPath, [...serviceNodeFlags('enforcer'), 'services/enforcer/dist/main.js'], { cwd: root, env: { ...env, HTTP_PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] }),
    );
    targets.push({ name: root.split('/').pop(), port, pid: children.at(-1).pid, rounds: [], cpuUs: [] });
  }
  await waitReady(`http://127.0.0.1:${helloPort}/`);
  for (const t of targets) await waitReady(`http://127.0.0.1:${t.port}/readyz`);
  const body = JSON.stringify({ ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/api/items', headers: { 'user-agent': 'bench' } });
  const url = (port) => `http://127.0.0.1:${port}/v1/check`;
  await load(url(helloPort), body, 2);
  for (const t of targets) await load(url(t.port), body, 2);
  const hello = [];
  for (let round = 0; round < ROUNDS; round++) {
    hello.push(await load(url(helloPort), body, 2));
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(k + round) % targets.length];
      const cpu0 = cpuMicros(t.pid);
      const loaded = await load(url(t.port), body, 2);
      t.cpuUs.push((cpuMicros(t.pid) - cpu0) / (loaded.perS * 2));
      t.rounds.push(loaded);
    }
    process.stderr.write(
      `round ${round + 1}: hello ${Math.round(hello.at(-1).perS)} ${targets.map((t) => `${t.name} ${Math.round(t.rounds.at(-1).perS)} (${t.rounds.at(-1).meanMs} ms)`).join('  ')}\n`,
    );
  }
  const first = targets[0];
  console.log(
    JSON.stringify({
      name: 'compare-enforcer-http',
      rounds: ROUNDS,
      batch_answers: env.ENFORCER_BATCH_ANSWERS ?? 'the default',
      http_ceiling_per_s: Math.round(median(hello.map((r) => r.perS))),
      builds: targets.map((t) => ({
        build: t.name,
        http_checks_per_s: Math.round(median(t.rounds.map((r) => r.perS))),
        http_ratio: Number(median(t.rounds.map((r, i) => r.perS / hello[i].perS)).toFixed(3)),
        http_latency_mean_ms: median(t.rounds.map((r) => r.meanMs)),
        http_latency_p99_ms: median(t.rounds.map((r) => r.p99Ms)),
        cpu_us_per_check: Number(median(t.cpuUs).toFixed(2)),
        vs_first: {
          cpu_per_check: Number(median(t.cpuUs.map((c, i) => c / first.cpuUs[i])).toFixed(3)),
          http_checks: Number(median(t.rounds.map((r, i) => r.perS / first.rounds[i].perS)).toFixed(3)),
          http_latency_mean: Number(median(t.rounds.map((r, i) => r.meanMs / first.rounds[i].meanMs)).toFixed(3)),
        },
      })),
    }),
  );
} finally {
  for (const c of children) c.kill('SIGTERM');
}
