import { Type } from '@sinclair/typebox';
import { baseEnv, httpPort, kafkaEnv, redisEnv, type ConfigOf } from '@banstream/platform';
import { hardLimitEnv } from './hard/config.js';

/** Every variable the enforcer sidecar reads; README "Configuration" lists them. */
export const enforcerEnv = {
  ...baseEnv,
  ...kafkaEnv,
  ...redisEnv,
  ...hardLimitEnv,
  HTTP_PORT: httpPort(8082),
  ENFORCER_TRUSTED_PROXIES: Type.String({
    default: '127.0.0.1,::1', pattern: '^[0-9A-Fa-f:./, ]*$',
    expected: 'comma-separated addresses or CIDRs whose X-Forwarded-For is believed, e.g. 127.0.0.1,10.0.0.0/8',
  }),
  ENFORCER_BATCH_ANSWERS: Type.Boolean({
    default: true, expected: 'true or false: whether the answers decided in one event-loop turn are written together (fewer client wake-ups under load)',
  }),
  ENFORCER_PURGE_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000, expected: 'milliseconds from 100 to 600000 between purges of expired cache entries' }),
};
export type EnforcerConfig = ConfigOf<typeof enforcerEnv>;
