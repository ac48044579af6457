import { Type, type TSchema } from '@sinclair/typebox';

/**
 * Every environment variable banstream reads, in one place. Each entry is a
 * TypeBox schema: it validates the value and gives the TypeScript type. `expected`
 * is the human form quoted in the error when a value is missing or wrong.
 */
const HOST_PORT = String.raw`[A-Za-z0-9_.\-]+:\d{1,5}|\[[0-9A-Fa-f:]+\]:\d{1,5}`;

function opt<T extends TSchema>(schema: T) {
  return Type.Optional(schema);
}

/** HTTP_PORT with the service's own default. */
export function httpPort(defaultPort?: number) {
  return Type.Integer({ minimum: 0, maximum: 65535, expected: 'a TCP port from 0 to 65535', ...(defaultPort === undefined ? {} : { default: defaultPort }) });
}

export const env = {
  SERVICE_NAME: opt(Type.String({ minLength: 1, expected: 'a short service name' })),
  LOG_LEVEL: Type.Union(
    [Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')],
    { default: 'info', expected: 'one of fatal, error, warn, info, debug, trace, silent' },
  ),
  HTTP_HOST: Type.String({ minLength: 1, default: '127.0.0.1', expected: 'an interface address such as 127.0.0.1 or 0.0.0.0' }),
  HTTP_PORT: httpPort(),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000, expected: 'milliseconds from 100 to 600000' }),

  KAFKA_BROKERS: Type.String({
    pattern: `^(${HOST_PORT})(,(${HOST_PORT}))*$`,
    expected: 'a comma-separated list of host:port, e.g. 127.0.0.1:9092,127.0.0.1:9093',
  }),
  KAFKA_CLIENT_ID: opt(Type.String({ minLength: 1, pattern: '^[A-Za-z0-9._-]+$', expected: 'letters, digits, dot, dash or underscore' })),
  KAFKA_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 5_000, expected: 'milliseconds from 100 to 120000' }),
  TOPIC_PREFIX: Type.String({ pattern: '^[A-Za-z0-9._-]*$', maxLength: 100, default: 'banstream.', expected: 'letters, digits, dot, dash or underscore, e.g. banstream.' }),
  TOPIC_PARTITIONS: Type.Integer({ minimum: 1, maximum: 10_000, default: 6, expected: 'a partition count from 1 to 10000' }),
  TOPIC_REPLICATION_FACTOR: Type.Integer({ minimum: 1, maximum: 16, default: 1, expected: 'a replication factor from 1 to 16' }),
  TOPIC_AUTO_CREATE: Type.Boolean({ default: true, expected: 'true or false' }),

  REDIS_URL: Type.String({ pattern: '^rediss?://', expected: 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6380' }),
} as const;

export type EnvName = keyof typeof env;

/**
 * How events count in time: read by the aggregator and by the control plane's
 * backtest, which must count as the aggregator does.
 */
export const countingEnv = {
  AGGREGATOR_GRACE_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 5_000, expected: 'milliseconds from 0 to 3600000 (how late an event may arrive and still count)' }),
  AGGREGATOR_MAX_FUTURE_MS: Type.Integer({
    minimum: 0, maximum: 86_400_000, default: 5_000, expected: 'milliseconds from 0 to 86400000 (events dated further ahead of the time their record was received go to the DLQ)',
  }),
};
