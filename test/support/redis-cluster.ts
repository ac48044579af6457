import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);

/**
 * A real Redis Cluster of the test's own: `masters` masters with `replicasPerMaster`
 * replicas each, every one a redis-server process on free ports (client and cluster
 * bus) in a temp dir, joined by `redis-cli --cluster create`. The test may SIGKILL any
 * node; `stop()` kills them all and removes the dir.
 */
export interface RedisClusterNode {
  readonly port: number;
  readonly busPort: number;
  readonly running: boolean;
}

export interface SlotOwner {
  start: number;
  end: number;
  masterPort: number;
  replicaPorts: number[];
}

export interface TestRedisCluster {
  readonly nodes: readonly RedisClusterNode[];
  /** `127.0.0.1:<port>` of every node, comma-separated: a REDIS_CLUSTER_NODES value. */
  readonly seeds: string;
  /** A cluster command's output on a node (redis-cli, so no client library is involved). */
  cli(port: number, ...args: string[]): Promise<string>;
  /** Which running master serves which slots, as a running node sees it. */
  slots(): Promise<SlotOwner[]>;
  /** Waits until every running node reports cluster_state:ok and agrees on who owns every slot. */
  waitForOk(timeoutMs?: number): Promise<void>;
  /** SIGKILL: the node is gone at once, as in a crash. */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent master takes to be failed over (ms). */
  nodeTimeoutMs?: number;
}

export async function startRedisCluster(options: ClusterOptions = {}): Promise<TestRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 2_000;
  const dir = mkdtempSync(join(tmpdir(), 'banstream-redis-cluster-'));
  const children = new Map<number, ChildProcess>();
  const killAll = (): void => {
    for (const child of children.values()) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const nodes: { port: number; busPort: number; running: boolean }[] = [];
  for (let i = 0; i < masters * (1 + replicas); i++) nodes.push({ port: await freePort(), busPort: await freePort(), running: false });

  const cli = async (port: number, ...args: string[]): Promise<string> => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout;

  const cluster: TestRedisCluster = {
    nodes,
    seeds: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    cli,
    async slots() {
      const node = nodes.find((n) => n.running);
      if (!node) throw new Error('no Redis Cluster node is running');
      return ownersOf(node.port);
    },
    async waitForOk(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        const states = await Promise.all(
          nodes
            .filter((n) => n.running)
            .map(async (n) => {
              try {
                return /cluster_state:ok/.test(await cli(n.port, 'CLUSTER', 'INFO')) ? 'ok' : `${n.port}: not ok`;
              } catch (error) {
                return `${n.port}: ${(error as Error).message}`;
              }
            }),
        );
        const bad = states.filter((s) => s !== 'ok');
        let covered = false;
        if (bad.length === 0) {
          try {
            const owners = await cluster.slots();
            const alive = new Set(nodes.filter((n) => n.running).map((n) => n.port));
            covered = owners.reduce((sum, o) => sum + (o.end - o.start + 1), 0) === 16_384 && owners.every((o) => alive.has(o.masterPort));
            if (!covered) last = 'slots not all served by running masters yet';
          } catch (error) {
            last = (error as Error).message;
          }
        } else {
          last = bad.join('; ');
        }
        if (covered) return;
        if (Date.now() > deadline) throw new Error(`Redis Cluster not ok within ${timeoutMs} ms: ${last}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async kill(port) {
      const child = children.get(port);
      const node = nodes.find((n) => n.port === port);
      if (!child || !node) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      children.delete(port);
      node.running = false;
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

  /** Who serves which slots, from CLUSTER NODES (one line a node: id, address, flags, master id, …, slot ranges). */
  async function ownersOf(port: number): Promise<SlotOwner[]> {
    const text = await cli(port, 'CLUSTER', 'NODES');
    const byId = new Map<string, { port: number; master: boolean; masterId: string; slots: [number, number][]; failed: boolean }>();
    for (const line of text.trim().split('\n')) {
      const [id, address, flags, masterId, , , , , ...slotRanges] = line.trim().split(' ');
      if (!id || !address || !flags) continue;
      const nodePort = Number(address.split('@')[0]!.split(':').pop());
      const ranges = slotRanges
        .filter((r) => !r.startsWith('['))
        .map((r): [number, number] => {
          const [a, b] = r.split('-');
          return [Number(a), Number(b ?? a)];
        });
      byId.set(id, { port: nodePort, master: flags.includes('master'), masterId: masterId ?? '-', slots: ranges, failed: /fail/.test(flags) });
    }
    const owners: SlotOwner[] = [];
    for (const [id, node] of byId) {
      if (!node.master || node.failed) continue;
      const replicaPorts = [...byId.values()].filter((r) => r.masterId === id).map((r) => r.port);
      for (const [start, end] of node.slots) owners.push({ start, end, masterPort: node.port, replicaPorts });
    }
    return owners.sort((a, b) => a.start - b.start);
  }

  try {
    await Promise.all(
      nodes.map(async (node) => {
        const args = [
          '--port',
          String(node.port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(node.busPort),
          '--cluster-config-file',
          join(dir, `nodes-${node.port}.conf`),
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
          '--daemonize',
          'no',
        ];
        const child = spawn('redis-server', args, { stdio: 'ignore' });
        children.set(node.port, child);
        child.once('exit', () => {
          node.running = false;
        });
        const deadline = Date.now() + 10_000;
        for (;;) {
          try {
            if ((await cli(node.port, 'PING')).trim() === 'PONG') break;
          } catch {
            // not listening yet
          }
          if (child.exitCode !== null) throw new Error(`redis-server on port ${node.port} exited during start-up`);
          if (Date.now() > deadline) throw new Error(`redis-server on port ${node.port} did not answer PING within 10 s`);
          await new Promise((r) => setTimeout(r, 50));
        }
        node.running = true;
      }),
    );
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
    await cluster.waitForOk();
    // Every replica has its master's data before anything is killed (a replica that never synced cannot take over).
    const deadline = Date.now() + 30_000;
    for (;;) {
      const links = await Promise.all(nodes.map(async (n) => (await cli(n.port, 'INFO', 'replication')).match(/role:(\w+)|master_link_status:(\w+)/g)?.join(' ') ?? ''));
      const replicasUp = links.filter((l) => l.includes('role:slave') && l.includes('master_link_status:up')).length;
      if (replicasUp === masters * replicas) break;
      if (Date.now() > deadline) throw new Error(`Redis Cluster replicas not in sync within 30 s: ${links.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
