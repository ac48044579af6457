import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Candidate, FailureMode } from '@banstream/core';
import { createMetricsRegistry, createRedisClient, loadConfig, redisConnectionFromConfig, redisEnv, type RedisClient } from '@banstream/platform';
import { createHardLimiter, type HardLimiter, type HardLimitPolicy } from '../services/enforcer/src/hard/index.js';
import { captureLogger, waitUntil } from './support/infra.js';
import { startRedisSentinel, type TestRedisSentinel } from './support/redis-sentinel.js';

/**
 * The enforcer's hard limits on a primary watched by three Sentinels: the client finds
 * the primary through them, and after the primary is killed with SIGKILL the failure
 * modes decide until the Sentinels promote the replica, then the same client and
 * limiter use Redis again.
 */
function policy(id: string, failureMode: FailureMode): HardLimitPolicy {
  return {
    id,
    mode: 'enforce',
    threshold: { count: 2, intervalMs: 3_600_000 },
    action: { type: 'throttle', status: 429 },
    enforcement: { type: 'hard', failureMode, algorithm: 'sliding-window' },
  };
}

describe('hard limits on Redis behind Sentinel', () => {
  let setup: TestRedisSentinel;
  let client: RedisClient;
  let limiter: HardLimiter;
  const log = captureLogger();

  beforeAll(async () => {
    setup = await startRedisSentinel({ downAfterMs: 1_000 });
    const connection = redisConnectionFromConfig(loadConfig(redisEnv, { REDIS_MODE: 'sentinel', REDIS_SENTINELS: setup.sentinels, REDIS_SENTINEL_MASTER: setup.masterName }));
    client = createRedisClient(connection, log.logger);
    await client.connect();
    limiter = createHardLimiter({
      redis: client,
      logger: log.logger,
      registry: createMetricsRegistry('enforcer-sentinel', { defaultMetrics: false }),
      timeoutMs: 150,
      breaker: { failureThreshold: 3, coolDownMs: 300 },
    });
    await limiter.warmUp();
  }, 60_000);

  afterAll(async () => {
    limiter?.close();
    client?.disconnect();
    await setup?.stop();
  });

  it('finds the primary through the Sentinels, follows the failure modes while it is gone, and uses the promoted replica by itself', async () => {
    const OPEN = policy('sentinel-open', 'open');
    const CLOSED = policy('sentinel-closed', 'closed');
    let n = 0;
    const check = (): Promise<Candidate[]> => {
      const subject = `ip:192.0.2.${++n % 250}`;
      return limiter.check(
        [OPEN, CLOSED].map((p) => ({ policy: p, subject })),
        Date.now(),
      );
    };
    expect((await check()).map((c) => [c.source, c.deny])).toEqual([
      ['hard-limit', false],
      ['hard-limit', false],
    ]);
    // The counts are on the primary the Sentinels named.
    expect(Number((await setup.cli(setup.primaryPort, 'DBSIZE')).trim())).toBeGreaterThan(0);

    const killedAt = Date.now();
    await setup.kill(setup.primaryPort);
    for (let i = 0; i < 3; i++) {
      const [open, closed] = await check();
      expect(open).toMatchObject({ source: 'fail-mode', deny: false });
      expect(closed).toMatchObject({ source: 'fail-mode', deny: true });
    }
    expect(Date.now() - killedAt).toBeLessThan(1_000);

    await waitUntil(
      async () => {
        const decided = await check();
        return decided.every((c) => c.source === 'hard-limit');
      },
      'hard-limit decisions from the replica the Sentinels promote',
      30_000,
      100,
    );
    expect(await setup.currentPrimaryPort()).toBe(setup.replicaPort);
    console.log(`[redis-sentinel] primary killed; Redis decisions again after ${Date.now() - killedAt} ms`);
  }, 60_000);
});
