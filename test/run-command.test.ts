import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackDown, stackSettings, stackStatus } from '../scripts/stack/index.mjs';
import { waitUntil } from './support/infra.js';
import { ownStackEnv } from './support/own-stack.js';
import { REPO_ROOT, exitOf, exitWithin, freePort, isAlive, type RunningProcess } from './support/processes.js';

// The README's run command on a stack of its own (own folder and ports), so that
// stopping it cannot disturb the broker the other tests use.
describe('npm start (scripts/run.mjs)', () => {
  const dirs: string[] = [];
  const envs: Record<string, string>[] = [];

  afterAll(async () => {
    for (const env of envs) await stackDown(stackSettings(env));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** The runner on a stack of its own: own folder and ports. */
  async function startRun(): Promise<{ env: Record<string, string>; proc: RunningProcess; dir: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'banstream-run-'));
    dirs.push(dir);
    const env = {
      ...(await ownStackEnv(dir)),
      BANSTREAM_INGEST_PORT: String(await freePort()),
      BANSTREAM_AGGREGATOR_PORT: String(await freePort()),
      BANSTREAM_ENFORCER_PORT: String(await freePort()),
      BANSTREAM_CONTROL_PORT: String(await freePort()),
    };
    envs.push(env);
    const child = spawn(process.execPath, ['scripts/run.mjs'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const proc: RunningProcess = { child, output: () => out, exited: exitOf(child) };
    return { env, proc, dir };
  }

  it('starts Kafka, Redis and the four services, and Ctrl-C stops every process it started', async () => {
    const { env, proc, dir } = await startRun();
    const { child } = proc;
    // The runner says "up" and then its hints in separate writes: wait for the last hint.
    await waitUntil(() => proc.output().includes('npx banstream --help') || child.exitCode !== null, "the runner's last hint", 90_000, 200);
    // On failure, show what the runner said.
    expect(proc.output()).toContain('banstream is up');
    // The local gateway takes anonymous edges only because the runner says so, and says it.
    expect(proc.output()).toContain('the ingest gateway accepts events without an edge token (INGEST_ALLOW_ANONYMOUS_EDGES=true for this local run; set INGEST_EDGE_TOKENS to require them)');
    for (const name of ['INGEST', 'AGGREGATOR', 'ENFORCER', 'CONTROL']) {
      const status = await fetch(`http://127.0.0.1:${env[`BANSTREAM_${name}_PORT`]}/readyz`).then(
        (r) => r.status,
        (e: Error) => `${e.message}: ${String(e.cause)}`,
      );
      expect(status, `${name} /readyz; the runner said:\n${proc.output()}`).toBe(200);
    }
    const { services } = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { services: Record<string, number> };
    const status = stackStatus(stackSettings(env));
    const pids = [...Object.values(services), Number(/pid (\d+)/.exec(status.kafka)?.[1]), Number(/pid (\d+)/.exec(status.redis)?.[1])];
    expect(pids).toHaveLength(6);
    // The CLI reaches the control API with the local admin token the run made.
    const token = readFileSync(join(dir, 'control-admin.token'), 'utf8').trim();
    const policies = await fetch(`http://127.0.0.1:${env.BANSTREAM_CONTROL_PORT}/v1/policies`, { headers: { authorization: `Bearer ${token}` } });
    expect(policies.status).toBe(200);
    expect(proc.output()).not.toContain(token);
    expect(pids.every(isAlive)).toBe(true);

    child.kill('SIGINT');
    expect(await exitWithin(proc, 60_000)).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(proc.output()).toContain('stack: kafka stopped, redis stopped');
  }, 150_000);

  it('stops everything and never says "up" when a service cannot start', async () => {
    let blocker: Server | undefined;
    try {
      const { env, proc } = await startRun();
      // Something else holds the aggregator's port, so the aggregator exits at start.
      blocker = createServer();
      await new Promise<void>((resolve) => blocker?.listen(Number(env.BANSTREAM_AGGREGATOR_PORT), '127.0.0.1', resolve));
      expect(await exitWithin(proc, 120_000), proc.output()).toBe(1);
      expect(proc.output()).toMatch(/aggregator exited unexpectedly \(\d+\); stopping everything/);
      expect(proc.output()).not.toContain('banstream is up');
      expect(proc.output()).toContain('stack: kafka stopped, redis stopped');
    } finally {
      blocker?.close();
    }
  }, 150_000);
});
