import { describe, expect, it } from 'vitest';
import { ROLES } from '@banstream/api';
import { loadConfig } from '@banstream/platform';
import { controlEnv } from './config.js';

const HASH = 'a'.repeat(64);
const load = (tokens: string) => loadConfig(controlEnv, { KAFKA_BROKERS: 'k:1', CONTROL_TOKENS: tokens });

describe('control configuration: CONTROL_TOKENS', () => {
  it('takes an entry for every role of the API, and only those', () => {
    expect(load(ROLES.map((role, i) => `user${i}:${role}:${HASH}`).join(',')).CONTROL_TOKENS).toContain(`user0:${ROLES[0]}:`);
    expect(() => load(`root:superuser:${HASH}`)).toThrow(/role viewer, operator or admin/);
  });

  it('counts with the same grace and future bound variables as the aggregator', () => {
    const config = loadConfig(controlEnv, { KAFKA_BROKERS: 'k:1', AGGREGATOR_GRACE_MS: '7000' });
    expect([config.AGGREGATOR_GRACE_MS, config.AGGREGATOR_MAX_FUTURE_MS]).toEqual([7_000, 5_000]);
  });
});
