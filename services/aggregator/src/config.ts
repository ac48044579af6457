import { Type } from '@sinclair/typebox';
import { baseEnv, httpPort, kafkaEnv, type ConfigOf } from '@banstream/platform';

const ms = (min: number, max: number, fallback: number, what: string) =>
  Type.Integer({ minimum: min, maximum: max, default: fallback, expected: `milliseconds from ${min} to ${max} (${what})` });

/** Every variable the aggregator reads; README "Configuration" lists them. */
export const aggregatorEnv = {
  ...baseEnv,
  ...kafkaEnv,
  HTTP_PORT: httpPort(8081),
  /** Instances with the same group share the events topic. */
  AGGREGATOR_GROUP_ID: Type.String({ pattern: '^[A-Za-z0-9._-]+$', default: 'banstream-aggregator', expected: 'letters, digits, dot, dash or underscore' }),
  AGGREGATOR_GRACE_MS: ms(0, 3_600_000, 5_000, 'how late an event may arrive and still count'),
  AGGREGATOR_MAX_FUTURE_MS: ms(0, 86_400_000, 60_000, 'events dated further ahead go to the DLQ'),
  AGGREGATOR_HOT_SHARE: Type.Number({ minimum: 0, maximum: 1, default: 0.5, expected: 'a share from 0 to 1 of a policy threshold; counts at or above it are published' }),
  AGGREGATOR_COUNT_INTERVAL_MS: ms(10, 60_000, 250, 'least time between two publications of one subject count'),
  AGGREGATOR_TICK_MS: ms(5, 10_000, 50, 'how often counts, cool-downs and ban expiries are published'),
  AGGREGATOR_GEO_WINDOW_MS: ms(1_000, 86_400_000, 60_000, 'window of the per-country and per-region counts'),
  AGGREGATOR_SESSION_TIMEOUT_MS: ms(6_000, 300_000, 10_000, 'how soon the group notices a dead instance'),
};
export type AggregatorConfig = ConfigOf<typeof aggregatorEnv>;
