import { Type } from '@sinclair/typebox';
import { aggregatorEnv } from '@banstream/aggregator';
import { baseEnv, httpPort, kafkaEnv, type ConfigOf } from '@banstream/platform';

/** Every variable the control service reads; README "Configuration" lists them. */
export const controlEnv = {
  ...baseEnv,
  ...kafkaEnv,
  HTTP_PORT: httpPort(8083),
  /** Token hashes inline: `name:role:sha256hex`, comma-separated. Never the tokens themselves. */
  CONTROL_TOKENS: Type.Optional(Type.String({
    pattern: '^([A-Za-z0-9._@-]+:(viewer|operator|admin):[0-9a-f]{64})(,[A-Za-z0-9._@-]+:(viewer|operator|admin):[0-9a-f]{64})*$',
    expected: 'comma-separated name:role:sha256hex entries (role viewer, operator or admin; `banstream token new` prints one)',
  })),
  /** The same entries in a file, one per line; # starts a comment. */
  CONTROL_TOKENS_FILE: Type.Optional(Type.String({ minLength: 1, expected: 'the path of a file of name:role:sha256hex lines' })),
  CONTROL_RATE_LIMIT: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 600, expected: 'requests per minute one client (token, or address without one) may make' }),
  CONTROL_BAN_SWEEP_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000, expected: 'milliseconds between tombstones for expired manual bans' }),
  CONTROL_ALERTS_KEPT: Type.Integer({ minimum: 10, maximum: 1_000_000, default: 1_000, expected: 'how many recent alerts the service keeps in memory' }),
  /** A backtest counts as the aggregator does: same grace and future bound. */
  AGGREGATOR_GRACE_MS: aggregatorEnv.AGGREGATOR_GRACE_MS,
  AGGREGATOR_MAX_FUTURE_MS: aggregatorEnv.AGGREGATOR_MAX_FUTURE_MS,
};
export type ControlConfig = ConfigOf<typeof controlEnv>;
