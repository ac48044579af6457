import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger, testInfra, uniqueName } from './support/infra.js';
import { testKafka } from './support/kafka.js';
import { describeProcess, exitOf, exitWithin, freePort, REPO_ROOT, type RunningProcess } from './support/processes.js';

/**
 * The container images, without a Docker engine: the test lays out an image's /app the
 * way services/Dockerfile does (the manifests, `npm ci --omit=dev`, then
 * services/assemble-image.sh, the very script the Dockerfile's assemble stage runs),
 * in a temporary directory outside the repository, and starts every service there
 * with the Dockerfile's own runtime ENV and CMD against the shared Kafka and Redis.
 * A run-time file that the image lacks (a Lua script, a schema, the geography
 * database) stops that service, and this test with it.
 */

const SERVICES = ['ingest', 'aggregator', 'enforcer', 'control'] as const;
type Service = (typeof SERVICES)[number];

const DOCKERFILE = join(REPO_ROOT, 'services/Dockerfile');
const ASSEMBLE = join(REPO_ROOT, 'services/assemble-image.sh');
/** Marks a finished `npm ci --omit=dev` in the cache. */
const COMPLETE = '.banstream-complete';

/** The runtime stage's WORKDIR, ENV and CMD, read from the Dockerfile itself. */
interface RuntimeStage {
  workdir: string;
  env: Record<string, string>;
  cmd: string[];
}

function parseRuntimeStage(text: string): RuntimeStage {
  // Docker drops comment lines (even inside a continuation) and then joins continuations.
  const logical = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n');
  const from = logical.findIndex((line) => /^FROM\s+\S+\s+AS\s+runtime\s*$/i.test(line.trim()));
  if (from < 0) throw new Error('services/Dockerfile: no `FROM ... AS runtime` stage');
  const stage: RuntimeStage = { workdir: '/', env: {}, cmd: [] };
  for (const line of logical.slice(from + 1)) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const [, instruction, rest] = match as unknown as [string, string, string];
    if (instruction === 'FROM') break;
    if (instruction === 'WORKDIR') stage.workdir = rest.trim();
    if (instruction === 'ENV') {
      for (const pair of rest.trim().split(/\s+/)) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new Error(`services/Dockerfile: ENV entry "${pair}" is not KEY=VALUE`);
        stage.env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    }
    if (instruction === 'CMD') stage.cmd = JSON.parse(rest) as string[];
  }
  if (stage.cmd.length === 0) throw new Error('services/Dockerfile: the runtime stage has no exec-form CMD');
  return stage;
}

/** The manifests stage: package.json and the lock at the root, and every workspace's package.json. */
function workspaceDirs(root: string): string[] {
  const dirs = ['schemas'];
  for (const parent of ['packages', 'services']) {
    for (const name of readdirSync(join(root, parent)).sort()) dirs.push(`${parent}/${name}`);
  }
  return dirs.filter((ws) => existsSync(join(root, ws, 'package.json')));
}

function copyManifests(into: string): void {
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(REPO_ROOT, file), join(into, file));
  for (const ws of workspaceDirs(REPO_ROOT)) {
    mkdirSync(join(into, ws), { recursive: true });
    cpSync(join(REPO_ROOT, ws, 'package.json'), join(into, ws, 'package.json'));
  }
}

/** npm's environment without what `npm test` put there for its own script. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(cache|registry|userconfig)$/i.test(key)) continue;
    if (key === 'NODE_ENV' || key === 'INIT_CWD' || key === 'NODE_PATH') continue;
    env[key] = value;
  }
  return env;
}

/**
 * The prod-deps stage, `npm ci --omit=dev` on the manifests: done once per lock file
 * and set of manifests, and kept in the temporary directory for the next run.
 */
async function productionModules(): Promise<{ dir: string; ms: number; cached: boolean }> {
  const hash = createHash('sha256');
  hash.update(readFileSync(join(REPO_ROOT, 'package-lock.json')));
  for (const ws of ['.', ...workspaceDirs(REPO_ROOT)]) hash.update(ws).update(readFileSync(join(REPO_ROOT, ws, 'package.json')));
  const cache = join(tmpdir(), `banstream-image-deps-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(join(cache, COMPLETE))) return { dir: cache, ms: 0, cached: true };
  const staging = mkdtempSync(join(tmpdir(), 'banstream-image-deps-staging-'));
  copyManifests(staging);
  const started = Date.now();
  const npm = await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], staging, npmEnv());
  if (npm.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`npm ci --omit=dev failed (${npm.status}):\n${npm.output}`);
  }
  const ms = Date.now() - started;
  writeFileSync(join(staging, COMPLETE), '');
  rmSync(cache, { recursive: true, force: true });
  renameSync(staging, cache);
  return { dir: cache, ms, cached: false };
}

/** Runs a command to its end without blocking the test worker (npm ci takes a while). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | string; output: string }> {
  const proc = start(command, args, cwd, env);
  return proc.exited.then((status) => ({ status, output: proc.output() }));
}

function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dirname(dir); ; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) return out;
  }
}

/** Resolves when /readyz answers 200; fails at once, with the output, if the process ends first. */
async function readyOrExited(proc: RunningProcess, port: number, service: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) throw new Error(`${service} exited before it was ready: ${describeProcess(proc)}`);
    const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
    if (res?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`${service}: /readyz did not answer 200 within ${timeoutMs} ms; ${describeProcess(proc)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function start(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): RunningProcess {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out, exited: exitOf(child) };
}

describe('the images: each service starts from what services/Dockerfile assembles, alone', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const prefix = `${uniqueName('img')}.`;
  const runtime = parseRuntimeStage(readFileSync(DOCKERFILE, 'utf8'));
  const running: RunningProcess[] = [];
  let root = '';
  let image = '';

  /** The image's environment, with paths under the image's WORKDIR moved to where the test assembled it. */
  function imageEnv(extra: Record<string, string>): Record<string, string> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
    for (const [key, value] of Object.entries({ ...runtime.env, ...extra })) {
      env[key] = value.startsWith(`${runtime.workdir}/`) ? join(image, value.slice(runtime.workdir.length + 1)) : value;
    }
    return env;
  }

  function connection(port: number): Record<string, string> {
    return {
      KAFKA_BROKERS: kafkaBrokers,
      REDIS_URL: redisUrl,
      TOPIC_PREFIX: prefix,
      TOPIC_PARTITIONS: '2',
      HTTP_PORT: String(port),
      // The image listens on every interface; the test keeps to loopback.
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '5000',
      INGEST_ALLOW_ANONYMOUS_EDGES: 'true',
    };
  }

  beforeAll(async () => {
    for (const service of SERVICES) {
      if (!existsSync(join(REPO_ROOT, 'services', service, 'dist/main.js'))) throw new Error(`services/${service}/dist/main.js is missing: run \`npm run build\` first`);
    }
    root = mkdtempSync(join(tmpdir(), 'banstream-image-'));
    image = join(root, 'app');
    mkdirSync(image);
    // The prod-deps stage's /app: the manifests and what `npm ci --omit=dev` made of them
    // (node_modules, and any a workspace needs of its own). cp -a keeps the workspace
    // links relative (node_modules/@banstream/x -> ../../packages/x).
    const modules = await productionModules();
    console.log(`[images] npm ci --omit=dev: ${modules.cached ? 'cached' : `${modules.ms} ms`} (${modules.dir})`);
    const copy = await run('cp', ['-a', `${modules.dir}/.`, image], image, { PATH: process.env.PATH ?? '' });
    if (copy.status !== 0) throw new Error(`copying the production dependencies failed: ${copy.output}`);
    rmSync(join(image, COMPLETE));
    // The Dockerfile: COPY --from=build /app /build; RUN sh /build/services/assemble-image.sh /build.
    // The repository after `npm run build` is that build tree.
    const assemble = spawnSync('sh', [ASSEMBLE, REPO_ROOT], { cwd: image, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    if (assemble.status !== 0) throw new Error(`services/assemble-image.sh failed (${assemble.status}):\n${assemble.stdout}\n${assemble.stderr}`);
  }, 900_000);

  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    if (root) rmSync(root, { recursive: true, force: true });
    const admin = testKafka(kafkaBrokers, captureLogger().logger).admin();
    await admin.connect();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
    await admin.disconnect();
  });

  it('pins the base image by digest, and reads the runtime stage: production, /app, the geography database, a CMD that execs node', () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(DOCKERFILE, 'utf8'))?.[1];
    expect(base, 'services/Dockerfile: ARG NODE_IMAGE=<image>@sha256:<digest>').toMatch(/^node:20[\w.-]*@sha256:[0-9a-f]{64}$/);
    expect(runtime.workdir).toBe('/app');
    expect(runtime.env.NODE_ENV).toBe('production');
    expect(runtime.env.INGEST_GEOIP_DB).toMatch(/^\/app\/node_modules\/.+\.mmdb$/);
    expect(runtime.cmd[0]).toBe('sh');
    expect(runtime.cmd.join(' ')).toContain('exec node');
  });

  it('resolves modules only inside the assembled directory: no node_modules above it, no dev dependency, workspace links inside', () => {
    for (const dir of ancestors(image)) expect(existsSync(join(dir, 'node_modules')), `${dir}/node_modules would be searched by module resolution`).toBe(false);
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        `const r = (m) => { try { return require.resolve(m); } catch { return null; } };
         console.log(JSON.stringify({ kafkajs: r('kafkajs'), enforcer: r('@banstream/enforcer'), vitest: r('vitest'), typescript: r('typescript'), cwd: process.cwd() }));`,
      ],
      { cwd: image, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' },
    );
    expect(probe.status, probe.stderr).toBe(0);
    const resolved = JSON.parse(probe.stdout) as Record<string, string | null>;
    expect(resolved.cwd).toBe(image);
    expect(resolved.kafkajs?.startsWith(`${image}/node_modules/`), String(resolved.kafkajs)).toBe(true);
    expect(resolved.enforcer).toBe(join(image, 'services/enforcer/dist/index.js'));
    expect(resolved.vitest).toBeNull();
    expect(resolved.typescript).toBeNull();
  });

  it('creates the topics with the command the Dockerfile names (node packages/kafka/dist/cli/create-topics.js)', async () => {
    expect(readFileSync(DOCKERFILE, 'utf8')).toContain('node packages/kafka/dist/cli/create-topics.js');
    const proc = start(process.execPath, ['packages/kafka/dist/cli/create-topics.js'], image, imageEnv(connection(await freePort())));
    running.push(proc);
    expect(await exitWithin(proc, 60_000), proc.output()).toBe(0);
    expect(proc.output()).toContain('topics ready');
  }, 180_000);

  it.each(SERVICES)('%s starts with the image CMD, reports ready on /readyz, and stops on SIGTERM', async (service: Service) => {
    const port = await freePort();
    const [command, ...args] = runtime.cmd as [string, ...string[]];
    const proc = start(command, args, image, imageEnv({ SERVICE: service, SERVICE_NAME: service, ...connection(port) }));
    running.push(proc);

    await readyOrExited(proc, port, service);
    if (service === 'ingest') {
      // The image's own database, not the repository's.
      expect(proc.output()).toContain('"msg":"geography database opened"');
      expect(proc.output()).toContain(`"path":"${join(image, 'node_modules/')}`);
    }

    proc.child.kill('SIGTERM');
    expect(await exitWithin(proc, 15_000), proc.output()).toBe(0);
  });
});
