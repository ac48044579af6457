import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Candidate, FailureMode } from '@banstream/core';
import { createMetricsRegistry, createRedisClient, redisConnectionFromConfig, redisEnv, loadConfig, type RedisClient, type Registry } from '@banstream/platform';
import { createHash } from 'node:crypto';
import { createHardLimiter, hardLimitScript, type HardLimiter, type HardLimitPolicy } from '../services/enforcer/src/hard/index.js';
import { hashSlot } from '../services/enforcer/src/hard/slot.js';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { testKafka } from './support/kafka.js';
import { describeProcess, exitWithin, freePort, spawnService } from './support/processes.js';
import { startRedisCluster, type SlotOwner, type TestRedisCluster } from './support/redis-cluster.js';

/**
 * The enforcer's hard limits on a real Redis Cluster (3 masters, 3 replicas, all
 * redis-server processes of this test): exact across four enforcer instances with
 * keys over many slots, and a master killed with SIGKILL handled by the failure
 * modes until its replica is promoted, then Redis again without any restart.
 */
const NODE_TIMEOUT_MS = 2_000;
const LIMIT = 5;
const SUBJECTS = 240;
const ATTEMPTS_PER_INSTANCE = 3;
const ACL_PASSWORD = `pw-${Date.now().toString(36)}-secret`;

function policy(id: string, failureMode: FailureMode, count = LIMIT): HardLimitPolicy {
  return {
    id,
    mode: 'enforce',
    threshold: { count, intervalMs: 3_600_000 },
    action: { type: 'throttle', status: 429 },
    enforcement: { type: 'hard', failureMode, algorithm: 'sliding-window' },
  };
}

describe('hard limits on a Redis Cluster', () => {
  let cluster: TestRedisCluster;
  const clients: RedisClient[] = [];
  const limiters: HardLimiter[] = [];
  const log = captureLogger();

  /** A client as the enforcer builds it from REDIS_MODE=cluster and REDIS_CLUSTER_NODES (a few seeds only). */
  function unconnectedClusterClient(): RedisClient {
    const seeds = cluster.seeds.split(',').slice(0, 2).join(',');
    const connection = redisConnectionFromConfig(loadConfig(redisEnv, { REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: seeds }));
    const client = createRedisClient(connection, log.logger);
    clients.push(client);
    return client;
  }

  async function clusterClient(): Promise<RedisClient> {
    const client = unconnectedClusterClient();
    await client.connect();
    return client;
  }

  /** A hard limiter on `redis` with the enforcer's settings but `timeoutMs`, not warmed up. */
  function hardLimiterOn(redis: RedisClient, timeoutMs: number, registry: Registry = createMetricsRegistry('enforcer-test', { defaultMetrics: false })): HardLimiter {
    const made = createHardLimiter({ redis, logger: log.logger, registry, timeoutMs, keyPrefix: 'bs:', breaker: { failureThreshold: 3, coolDownMs: 300 } });
    limiters.push(made);
    return made;
  }

  async function limiter(timeoutMs: number, registry?: Registry): Promise<HardLimiter> {
    const made = hardLimiterOn(await clusterClient(), timeoutMs, registry);
    await made.warmUp();
    return made;
  }

  /** The ACL user docs/operations/redis.md describes, on every node (ACLs are per node). */
  async function setUpAclUser(): Promise<void> {
    const rights = [
      '~bs:*',
      '+eval',
      '+evalsha',
      '+script|load',
      '+ping',
      '+info',
      '+cluster|slots',
      '+readonly',
      '+get',
      '+set',
      '+pexpire',
      '+time',
      '+zadd',
      '+zcard',
      '+zrange',
      '+zremrangebyscore',
    ];
    for (const node of cluster.nodes) expect((await cluster.cli(node.port, 'ACL', 'SETUSER', 'enforcer', 'reset', 'on', `>${ACL_PASSWORD}`, ...rights)).trim()).toBe('OK');
  }

  function ownerOf(owners: SlotOwner[], subject: string): SlotOwner {
    const slot = hashSlot(`{${subject}}`);
    const owner = owners.find((o) => o.start <= slot && slot <= o.end);
    if (!owner) throw new Error(`no master serves slot ${slot}`);
    return owner;
  }

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
  }, 90_000);

  afterAll(async () => {
    for (const l of limiters) l.close();
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  });

  it('a hard limit of N admits exactly N per subject in total when four enforcer instances hit subjects over many slots at once', async () => {
    const instances = await Promise.all([0, 1, 2, 3].map(() => limiter(5_000)));
    const exact = policy('cluster-exact', 'closed');
    const subjects = Array.from({ length: SUBJECTS }, (_, i) => `ip:198.51.${Math.floor(i / 250)}.${i % 250}`);
    const owners = await cluster.slots();
    // Spread: many slots, on every master.
    expect(new Set(subjects.map((s) => hashSlot(`{${s}}`))).size).toBeGreaterThan(SUBJECTS * 0.9);
    expect(new Set(subjects.map((s) => ownerOf(owners, s).masterPort)).size).toBe(3);

    // Every instance checks every subject ATTEMPTS_PER_INSTANCE times, all in flight together.
    const decisions = await Promise.all(
      instances.map((instance) => Promise.all(subjects.flatMap((subject) => Array.from({ length: ATTEMPTS_PER_INSTANCE }, () => instance.check([{ policy: exact, subject }], Date.now()))))),
    );
    const all = decisions.flat().map(([c]) => c!);
    expect(all).toHaveLength(4 * SUBJECTS * ATTEMPTS_PER_INSTANCE);
    // Redis decided every one (no failure mode, which would deny: `closed`).
    expect(all.filter((c) => c.source !== 'hard-limit')).toEqual([]);
    const admittedBy = new Map<string, number>();
    decisions.forEach((perInstance) => {
      perInstance.forEach(([c], i) => {
        const subject = subjects[Math.floor(i / ATTEMPTS_PER_INSTANCE)]!;
        if (!c!.deny) admittedBy.set(subject, (admittedBy.get(subject) ?? 0) + 1);
      });
    });
    for (const subject of subjects) expect(admittedBy.get(subject) ?? 0, subject).toBe(LIMIT);
    expect(all.filter((c) => !c.deny)).toHaveLength(SUBJECTS * LIMIT);

    // The counts live on all three masters, not on one node.
    for (const port of new Set(owners.map((o) => o.masterPort))) expect(Number((await cluster.cli(port, 'DBSIZE')).trim())).toBeGreaterThan(0);
  });

  it('as an ACL user with only the rights the docs list, its password read from REDIS_PASSWORD_FILE, checks are decided by Redis and the password is never logged', async () => {
    const password = ACL_PASSWORD;
    await setUpAclUser();
    const dir = mkdtempSync(join(tmpdir(), 'banstream-redis-acl-'));
    try {
      const file = join(dir, 'redis-password');
      writeFileSync(file, `${password}\n`, { mode: 0o600 });
      const connection = redisConnectionFromConfig(loadConfig(redisEnv, { REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: cluster.seeds, REDIS_USERNAME: 'enforcer', REDIS_PASSWORD_FILE: file }));
      const client = createRedisClient(connection, log.logger);
      clients.push(client);
      await client.connect();
      const instance = createHardLimiter({ redis: client, logger: log.logger, registry: createMetricsRegistry('enforcer-acl', { defaultMetrics: false }), timeoutMs: 5_000 });
      limiters.push(instance);
      await instance.warmUp();
      // Each algorithm, so every command its script runs is covered by the user's rights.
      const algorithms = (['sliding-window', 'sliding-log', 'token-bucket'] as const).map((algorithm) => {
        const p = policy(`acl-${algorithm}`, 'closed', 3);
        return { ...p, enforcement: { ...p.enforcement, algorithm } } as HardLimitPolicy;
      });
      const decided = await Promise.all(Array.from({ length: 30 }, (_, i) => instance.check([{ policy: algorithms[i % 3]!, subject: `user:acl-${i}` }], Date.now())));
      expect(decided.map(([c]) => [c!.source, c!.deny])).toEqual(decided.map(() => ['hard-limit', false]));
      // Outside its keys the user may do nothing: the rights are real.
      const refused = await cluster
        .cli(cluster.nodes[0]!.port, '--user', 'enforcer', '--pass', password, '--no-auth-warning', 'SET', 'elsewhere', '1')
        .catch((error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`);
      expect(refused).toMatch(/NOPERM/);
      expect(JSON.stringify(log.lines())).not.toContain(password);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the enforcer service, started with REDIS_MODE=cluster, the ACL user and its password file, loads its script on every master and reports ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'banstream-redis-acl-'));
    const prefix = `${uniqueName('cluster')}.`;
    const port = await freePort();
    try {
      const file = join(dir, 'redis-password');
      writeFileSync(file, `${ACL_PASSWORD}\n`, { mode: 0o600 });
      await setUpAclUser();
      // Empty script caches: what is there afterwards the service loaded.
      for (const node of cluster.nodes) await cluster.cli(node.port, 'SCRIPT', 'FLUSH');
      const proc = spawnService('enforcer', {
        KAFKA_BROKERS: testInfra().kafkaBrokers,
        TOPIC_PREFIX: prefix,
        TOPIC_PARTITIONS: '1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'info',
        REDIS_MODE: 'cluster',
        REDIS_CLUSTER_NODES: cluster.seeds.split(',').slice(0, 2).join(','),
        REDIS_USERNAME: 'enforcer',
        REDIS_PASSWORD_FILE: file,
      });
      try {
        // What /readyz said last, for the message. Starts that took 30 s, 60 s, then never ended in CI were
        // ioredis's cluster ready check failing (see the cluster_state:fail test below): about 2 s now.
        let lastAnswer = 'none yet';
        const ready = await waitUntil(
          async () => {
            const res = await fetch(`http://127.0.0.1:${port}/readyz`);
            const body = await res.text();
            lastAnswer = `${res.status} ${body}`;
            return res.status === 200 ? (JSON.parse(body) as { checks: Record<string, boolean> }) : undefined;
          },
          () => `the enforcer to be ready (last /readyz: ${lastAnswer}); ${describeProcess(proc)}`,
          120_000,
          100,
        );
        expect(ready.checks.redis).toBe(true);
        const sha = createHash('sha1').update(hardLimitScript().source).digest('hex');
        // Every master has it from the start; replicas get it on first use (EVAL on each new connection).
        const masters = [...new Set((await cluster.slots()).map((o) => o.masterPort))];
        expect(masters).toHaveLength(3);
        for (const master of masters) expect((await cluster.cli(master, 'SCRIPT', 'EXISTS', sha)).trim(), `script on ${master}`).toBe('1');
        expect(proc.output()).not.toContain(ACL_PASSWORD);
      } finally {
        proc.child.kill('SIGTERM');
        await exitWithin(proc, 10_000);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      const admin = testKafka(testInfra().kafkaBrokers, log.logger).admin();
      await admin.connect();
      const ours = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      if (ours.length > 0) await admin.deleteTopics({ topics: ours });
      await admin.disconnect();
    }
    // Longer than the wait for /readyz, so that a slow start fails with what /readyz said last, not vitest's bare timeout.
  }, 180_000);

  it('connects while every node says cluster_state:fail, applies the failure mode meanwhile, and decides by Redis once the cluster is ok', async () => {
    // ioredis's own ready check (CLUSTER INFO) failing left connect() pending for good; the same happened
    // when it asked a node whose connection was still opening: an enforcer that never started.
    const owners = await cluster.slots();
    const owner = owners.find((o) => o.start <= 0 && 0 <= o.end)!.masterPort;
    let restored = false;
    try {
      // The owner first: a node that has dropped the slot would take it back from the owner's next heartbeat.
      const others = cluster.nodes.filter((n) => n.port !== owner).map((n) => n.port);
      for (const port of [owner, ...others]) expect((await cluster.cli(port, 'CLUSTER', 'DELSLOTS', '0')).trim(), `DELSLOTS 0 on ${port}`).toBe('OK');
      await waitUntil(
        async () => (await Promise.all(cluster.nodes.map((n) => cluster.cli(n.port, 'CLUSTER', 'INFO')))).every((info) => info.includes('cluster_state:fail')),
        'every node to say cluster_state:fail',
        15_000,
      );
      const client = unconnectedClusterClient();
      const connected = await Promise.race([client.connect().then(() => 'connected'), new Promise((r) => setTimeout(r, 10_000, 'still pending after 10 s'))]);
      expect(connected).toBe('connected');
      const made = hardLimiterOn(client, 5_000);
      const failState = policy('cluster-fail-state', 'closed');
      // A cluster that says fail refuses every command (CLUSTERDOWN): `closed` denies.
      const [down] = await made.check([{ policy: failState, subject: 'user:fail-state-0' }], Date.now());
      expect([down!.source, down!.deny]).toEqual(['fail-mode', true]);
      await cluster.cli(owner, 'CLUSTER', 'ADDSLOTS', '0');
      await cluster.waitForOk();
      restored = true;
      let last: Candidate | undefined;
      await waitUntil(
        async () => {
          [last] = await made.check([{ policy: failState, subject: `user:fail-state-${Date.now()}` }], Date.now());
          return last!.source === 'hard-limit' && !last!.deny;
        },
        () => `checks decided by Redis again with the client connected during the failure (last: ${JSON.stringify(last)})`,
        15_000,
      );
    } finally {
      if (!restored) {
        await cluster.cli(owner, 'CLUSTER', 'ADDSLOTS', '0').catch(() => undefined);
        await cluster.waitForOk();
      }
    }
    // Past the waits above (15 + 10 + 30 + 15 s), so that the cluster is restored before the next test starts.
  }, 120_000);

  it('after SCRIPT FLUSH on every node, checks are still decided by Redis: each master answers NOSCRIPT once and gets EVAL', async () => {
    const instance = await limiter(5_000);
    const flushPolicy = policy('cluster-flush', 'closed');
    const round = async (tag: string) => {
      const subjects = Array.from({ length: 60 }, (_, i) => `user:${tag}-${i}`);
      const decided = await Promise.all(subjects.map((subject) => instance.check([{ policy: flushPolicy, subject }], Date.now())));
      expect(decided.map(([c]) => [c!.source, c!.deny])).toEqual(subjects.map(() => ['hard-limit', false]));
    };
    const masters = [...new Set((await cluster.slots()).map((o) => o.masterPort))];
    const noscript = async (port: number) => Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(await cluster.cli(port, 'INFO', 'errorstats'))?.[1] ?? 0);
    // First round: every master's connection has run the script (EVAL, then EVALSHA).
    await round('loaded');
    const before = await Promise.all(masters.map(noscript));
    for (const node of cluster.nodes) await cluster.cli(node.port, 'SCRIPT', 'FLUSH');
    await round('flushed');
    const after = await Promise.all(masters.map(noscript));
    masters.forEach((port, i) => expect(after[i]!, `NOSCRIPT answers of the master on ${port}`).toBeGreaterThan(before[i]!));
  });

  it('SIGKILL of a master: its slots follow each failure mode until the replica is promoted, then Redis decides again by itself', async () => {
    const registry = createMetricsRegistry('enforcer-failover', { defaultMetrics: false });
    const instance = await limiter(150, registry);
    const OPEN = policy('failover-open', 'open', 2);
    const CLOSED = policy('failover-closed', 'closed', 2);
    const LOCAL = policy('failover-local', 'local', 2);
    const owners = await cluster.slots();
    const victim = owners[0]!;
    // Subjects whose slots the victim serves.
    const onVictim: string[] = [];
    for (let i = 0; onVictim.length < 41; i++) if (ownerOf(owners, `ip:203.0.113.${i}`).masterPort === victim.masterPort) onVictim.push(`ip:203.0.113.${i}`);
    // One for the count that must survive the failover, never checked otherwise.
    const survivor = onVictim.pop()!;
    let next = 0;
    const check = (): Promise<Candidate[]> => {
      const subject = onVictim[next++ % onVictim.length]!;
      return instance.check(
        [OPEN, CLOSED, LOCAL].map((p) => ({ policy: p, subject })),
        Date.now(),
      );
    };

    const before = await check();
    expect(before.map((c) => [c.source, c.deny])).toEqual([
      ['hard-limit', false],
      ['hard-limit', false],
      ['hard-limit', false],
    ]);
    // A subject that uses up its limit of 2 before the kill; its replica has the count before the master dies.
    for (let i = 0; i < 2; i++) expect((await instance.check([{ policy: CLOSED, subject: survivor }], Date.now()))[0]).toMatchObject({ source: 'hard-limit', deny: false });
    const offsetOf = async (port: number, field: string) =>
      Number(new RegExp(`(?:^|\\n)${field}:(\\d+)`).exec((await cluster.cli(port, 'INFO', 'replication')).replaceAll('\r', ''))?.[1] ?? Number.NaN);
    const masterOffset = await offsetOf(victim.masterPort, 'master_repl_offset');
    await waitUntil(async () => (await offsetOf(victim.replicaPorts[0]!, 'slave_repl_offset')) >= masterOffset, 'the replica to catch up with its master', 10_000);

    const killedAt = Date.now();
    await cluster.kill(victim.masterPort);
    // Well inside the node timeout: nothing has been promoted yet, the slots have no master.
    const duringWindow: Candidate[][] = [];
    for (let i = 0; i < 4; i++) duringWindow.push(await check());
    expect(Date.now() - killedAt).toBeLessThan(NODE_TIMEOUT_MS);
    for (const [open, closed, local] of duringWindow) {
      expect(open).toMatchObject({ source: 'fail-mode', deny: false, reason: expect.stringMatching(/allowed by failure mode open/) });
      expect(closed).toMatchObject({ source: 'fail-mode', deny: true, reason: expect.stringMatching(/denied by failure mode closed/) });
      // A subject's first check in the in-process window of the `local` failure mode.
      expect(local).toMatchObject({ source: 'fail-mode', deny: false, reason: expect.stringMatching(/limit store unavailable; local limit/) });
    }

    // The replica takes over (cluster-node-timeout, then its election); the same limiter, on the same client, goes back to Redis.
    const back = await waitUntil(
      async () => {
        const decided = await check();
        return decided.every((c) => c.source === 'hard-limit') ? decided : undefined;
      },
      'hard-limit decisions from the promoted replica',
      30_000,
      100,
    );
    const recoveredAfterMs = Date.now() - killedAt;
    expect(back.map((c) => c.source)).toEqual(['hard-limit', 'hard-limit', 'hard-limit']);
    await cluster.waitForOk();
    const promoted = ownerOf(await cluster.slots(), onVictim[0]!);
    expect(promoted.masterPort).not.toBe(victim.masterPort);
    expect(victim.replicaPorts).toContain(promoted.masterPort);
    // Breaker closed again: 0.
    const breaker = (await registry.getSingleMetric('banstream_enforcer_redis_breaker_state')?.get())?.values[0]?.value;
    expect(breaker).toBe(0);
    // The count made before the kill survived the failover: the survivor's limit of 2 is used up.
    expect((await instance.check([{ policy: CLOSED, subject: survivor }], Date.now()))[0]).toMatchObject({ source: 'hard-limit', deny: true });
    console.log(`[redis-cluster] master on ${victim.masterPort} killed; Redis decisions again after ${recoveredAfterMs} ms (node timeout ${NODE_TIMEOUT_MS} ms)`);
  }, 60_000);
});
