import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);

/**
 * A primary, its replica and three Sentinels of the test's own (redis-server
 * processes on free ports in a temp dir), so the test may SIGKILL the primary and
 * watch the Sentinels promote the replica. `stop()` kills them all.
 */
export interface TestRedisSentinel {
  readonly masterName: string;
  readonly primaryPort: number;
  readonly replicaPort: number;
  /** `127.0.0.1:<port>` of each Sentinel, comma-separated: a REDIS_SENTINELS value. */
  readonly sentinels: string;
  cli(port: number, ...args: string[]): Promise<string>;
  /** The port the Sentinels name as the primary now. */
  currentPrimaryPort(): Promise<number>;
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisSentinel(options: { downAfterMs?: number } = {}): Promise<TestRedisSentinel> {
  const masterName = 'banstream-test';
  const downAfterMs = options.downAfterMs ?? 1_000;
  const dir = mkdtempSync(join(tmpdir(), 'banstream-redis-sentinel-'));
  const children = new Map<number, ChildProcess>();
  const killAll = (): void => {
    for (const child of children.values()) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const cli = async (port: number, ...args: string[]): Promise<string> => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout;

  async function startServer(port: number, args: string[]): Promise<void> {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    children.set(port, child);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        if ((await cli(port, 'PING')).trim() === 'PONG') return;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited during start-up`);
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const primaryPort = await freePort();
  const replicaPort = await freePort();
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];

  const setup: TestRedisSentinel = {
    masterName,
    primaryPort,
    replicaPort,
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    cli,
    async currentPrimaryPort() {
      const reply = await cli(sentinelPorts[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName);
      return Number(reply.trim().split('\n')[1]);
    },
    async kill(port) {
      const child = children.get(port);
      if (!child) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      children.delete(port);
    },
    async stop() {
      const exits = [...children.values()].map((child) => new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r))));
      killAll();
      await Promise.all(exits);
      children.clear();
      process.off('exit', killAll);
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await startServer(primaryPort, ['--port', String(primaryPort), ...common]);
    await startServer(replicaPort, ['--port', String(replicaPort), '--replicaof', '127.0.0.1', String(primaryPort), ...common]);
    for (const port of sentinelPorts) {
      // A Sentinel rewrites its own configuration file: one each.
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
          `sentinel failover-timeout ${masterName} 10000`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      await startServer(port, [file, '--sentinel']);
    }
    // The replica has synced and every Sentinel knows the replica and the other Sentinels.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const link = /master_link_status:up/.test(await cli(replicaPort, 'INFO', 'replication'));
      const views = await Promise.all(sentinelPorts.map(async (p) => (await cli(p, 'SENTINEL', 'MASTER', masterName)).split('\n').map((l) => l.trim())));
      const known = views.every((v) => Number(v[v.indexOf('num-slaves') + 1]) >= 1 && Number(v[v.indexOf('num-other-sentinels') + 1]) >= 2);
      if (link && known) break;
      if (Date.now() > deadline) throw new Error('Sentinel set-up not settled within 30 s');
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (error) {
    await setup.stop();
    throw error;
  }
  return setup;
}
