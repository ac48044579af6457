import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, defineLuaScripts, readLuaScripts, PLATFORM_LUA_DIR, type Redis } from '@banstream/platform';
import { fileURLToPath } from 'node:url';
import { captureLogger, testInfra, uniqueName } from './support/infra.js';

type CounterRedis = Redis & { counterIncr(key: string, by: number, windowMs: number): Promise<[number, number]> };

describe('Lua scripts on the real Redis', () => {
  let redis: CounterRedis;
  const prefix = `${uniqueName('lua')}:`;

  beforeAll(async () => {
    redis = createRedis({ url: testInfra().redisUrl, logger: captureLogger().logger, keyPrefix: prefix }) as CounterRedis;
    await redis.connect();
    defineLuaScripts(redis, readLuaScripts(fileURLToPath(PLATFORM_LUA_DIR)));
  });

  afterAll(async () => {
    // Only our own keys: the Redis may be shared, never flush it.
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(prefix.length)));
    redis.disconnect();
  });

  it('counts atomically under concurrency and sets the window TTL once', async () => {
    const key = '{tenant-1}:signups';
    const replies = await Promise.all(Array.from({ length: 200 }, () => redis.counterIncr(key, 1, 60_000)));
    const counts = replies.map(([count]) => count).sort((a, b) => a - b);
    // Every caller saw a distinct count: no lost update, no double count.
    expect(counts).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('lets the key expire when its window ends', async () => {
    const key = '{tenant-2}:logins';
    const [first, ttl] = await redis.counterIncr(key, 3, 150);
    expect(first).toBe(3);
    expect(ttl).toBe(150);
    await new Promise((r) => setTimeout(r, 300));
    expect(await redis.exists(key)).toBe(0);
    const [again] = await redis.counterIncr(key, 1, 150);
    expect(again).toBe(1);
  });

  it('still works after the script cache is gone (EVALSHA falls back to EVAL)', async () => {
    // SCRIPT FLUSH would empty a shared Redis's cache for everyone; a second client
    // with a freshly defined command exercises the same NOSCRIPT path on first use.
    const other = createRedis({ url: testInfra().redisUrl, logger: captureLogger().logger, keyPrefix: prefix }) as CounterRedis;
    await other.connect();
    defineLuaScripts(other, readLuaScripts(fileURLToPath(PLATFORM_LUA_DIR)));
    const [count] = await other.counterIncr('{tenant-3}:x', 5, 10_000);
    expect(count).toBe(5);
    other.disconnect();
  });
});
