import { describe, expect, it } from 'vitest';
import { loadConfig } from '@banstream/platform';
import { hardLimitEnv, hardLimiterSettings } from './config.js';

describe('hardLimitEnv', () => {
  it('defaults to a 5 ms timeout, the bs: prefix and a breaker of 5 failures and 1 s', () => {
    expect(hardLimiterSettings(loadConfig(hardLimitEnv, {}))).toEqual({
      timeoutMs: 5,
      keyPrefix: 'bs:',
      maxBatch: 128,
      breaker: { failureThreshold: 5, coolDownMs: 1_000 },
      localMaxEntries: 100_000,
    });
  });

  it('reads the variables and names a bad one with the form it expects', () => {
    const config = loadConfig(hardLimitEnv, { ENFORCER_REDIS_TIMEOUT_MS: '20', ENFORCER_BREAKER_COOLDOWN_MS: '250', ENFORCER_REDIS_KEY_PREFIX: 'shop:' });
    expect(hardLimiterSettings(config)).toMatchObject({ timeoutMs: 20, keyPrefix: 'shop:', breaker: { coolDownMs: 250 } });
    expect(() => loadConfig(hardLimitEnv, { ENFORCER_REDIS_TIMEOUT_MS: '0' })).toThrow(/ENFORCER_REDIS_TIMEOUT_MS: expected an integer from 1 to 10000/);
    expect(() => loadConfig(hardLimitEnv, { ENFORCER_REDIS_KEY_PREFIX: 'a{b}' })).toThrow(/ENFORCER_REDIS_KEY_PREFIX/);
  });
});
