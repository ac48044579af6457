import { Type, type TSchema } from '@sinclair/typebox';

/**
 * Every environment variable banstream reads, in one place. Each entry is a
 * TypeBox schema: it validates the value and gives the TypeScript type. `expected`
 * is the human form quoted in the error when a value is missing or wrong;
 * `description` says what it does (docs/operations/configuration.md is generated from both).
 */
const HOST_PORT = String.raw`[A-Za-z0-9_.\-]+:\d{1,5}|\[[0-9A-Fa-f:]+\]:\d{1,5}`;

function opt<T extends TSchema>(schema: T) {
  return Type.Optional(schema);
}

/** HTTP_PORT with the service's own default. */
export function httpPort(defaultPort?: number) {
  return Type.Integer({
    minimum: 0,
    maximum: 65535,
    expected: 'a TCP port from 0 to 65535',
    description: "where `/livez`, `/readyz`, `/metrics` (and the control API, the sidecar's API) are served",
    ...(defaultPort === undefined ? {} : { default: defaultPort }),
  });
}

export const env = {
  SERVICE_NAME: opt(Type.String({ minLength: 1, expected: 'a short service name', description: "the `service` of log lines and the `service` label of metrics; unset: the service's own name" })),
  LOG_LEVEL: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], {
    default: 'info',
    expected: 'one of fatal, error, warn, info, debug, trace, silent',
    description: 'pino level',
  }),
  HTTP_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    expected: 'an interface address such as 127.0.0.1 or 0.0.0.0',
    description: 'the interface `HTTP_PORT` listens on: loopback unless set (the Docker image and `docker-compose.yml` set 0.0.0.0)',
  }),
  HTTP_PORT: httpPort(),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000, expected: 'milliseconds from 100 to 600000', description: 'bound on a graceful stop after SIGTERM or SIGINT' }),

  KAFKA_BROKERS: Type.String({
    pattern: `^(${HOST_PORT})(,(${HOST_PORT}))*$`,
    expected: 'a comma-separated list of host:port, e.g. 127.0.0.1:9092,127.0.0.1:9093',
    description: 'the Kafka brokers to connect to',
  }),
  KAFKA_CLIENT_ID: opt(
    Type.String({
      minLength: 1,
      pattern: '^[A-Za-z0-9._-]+$',
      expected: 'letters, digits, dot, dash or underscore',
      description: 'the client id the service gives Kafka; unset: `banstream-<service>`',
    }),
  ),
  KAFKA_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 1_000,
    maximum: 120_000,
    default: 5_000,
    expected: 'milliseconds from 1000 to 120000',
    // Each request that times out closes its connection (patches/request-timeout-fix.ts): below a second, a busy broker's ordinary answers would.
    description: 'bound on one Kafka request; a request past it closes its connection',
  }),
  KAFKA_TLS: Type.Boolean({ default: false, expected: 'true or false', description: "connect to Kafka over TLS (the brokers' SSL or SASL_SSL listener); the `KAFKA_TLS_*` files need it on" }),
  KAFKA_TLS_CA_FILE: opt(Type.String({ minLength: 1, expected: 'a path to a PEM file of CA certificates', description: "the CAs a broker's certificate must chain to; unset: the system's CAs" })),
  KAFKA_TLS_CERT_FILE: opt(
    Type.String({ minLength: 1, expected: 'a path to a PEM certificate (chain)', description: 'a client certificate for brokers that ask for one (mutual TLS); needs `KAFKA_TLS_KEY_FILE`' }),
  ),
  KAFKA_TLS_KEY_FILE: opt(Type.String({ minLength: 1, expected: 'a path to a PEM private key', description: "the client certificate's private key; needs `KAFKA_TLS_CERT_FILE`" })),
  KAFKA_TLS_KEY_PASSWORD: opt(
    Type.String({ minLength: 1, expected: 'the passphrase of the private key', description: 'the passphrase of an encrypted `KAFKA_TLS_KEY_FILE` (secret: prefer `KAFKA_TLS_KEY_PASSWORD_FILE`)' }),
  ),
  KAFKA_TLS_KEY_PASSWORD_FILE: opt(
    Type.String({
      minLength: 1,
      expected: 'a path to a file holding the passphrase',
      description: 'a file holding the key passphrase, read instead of `KAFKA_TLS_KEY_PASSWORD` (one trailing newline is ignored)',
    }),
  ),
  KAFKA_TLS_SERVERNAME: opt(
    Type.String({ minLength: 1, expected: 'a host name', description: "the name a broker's certificate must carry, when it is not the host of `KAFKA_BROKERS` (also sent as SNI)" }),
  ),
  KAFKA_SASL_MECHANISM: Type.Union([Type.Literal('none'), Type.Literal('plain'), Type.Literal('scram-sha-256'), Type.Literal('scram-sha-512')], {
    default: 'none',
    expected: 'one of none, plain, scram-sha-256, scram-sha-512',
    description: 'how the service logs in to Kafka (SASL); `plain` sends the password itself, so it needs `KAFKA_TLS=true` (or `KAFKA_SASL_ALLOW_PLAINTEXT=true`)',
  }),
  KAFKA_SASL_USERNAME: opt(Type.String({ minLength: 1, expected: 'a SASL user name', description: 'the SASL user: the Kafka principal is `User:<name>`, which the ACLs name' })),
  KAFKA_SASL_PASSWORD: opt(
    Type.String({ minLength: 1, expected: 'the SASL password', description: 'the SASL password (secret: prefer `KAFKA_SASL_PASSWORD_FILE`); exactly one of the two with a mechanism' }),
  ),
  KAFKA_SASL_PASSWORD_FILE: opt(
    Type.String({
      minLength: 1,
      expected: 'a path to a file holding the SASL password',
      description: 'a file holding the SASL password, read instead of `KAFKA_SASL_PASSWORD` (one trailing newline is ignored)',
    }),
  ),
  KAFKA_SASL_ALLOW_PLAINTEXT: Type.Boolean({
    default: false,
    expected: 'true or false',
    description: 'let SASL `plain` run without TLS, the password readable on the network: for a test broker only',
  }),
  TOPIC_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9._-]*$',
    maxLength: 100,
    default: 'banstream.',
    expected: 'letters, digits, dot, dash or underscore, e.g. banstream.',
    description: 'prefix of every topic',
  }),
  TOPIC_PARTITIONS: Type.Integer({ minimum: 1, maximum: 10_000, default: 6, expected: 'a partition count from 1 to 10000', description: 'partitions of the topics created by code' }),
  TOPIC_REPLICATION_FACTOR: Type.Integer({ minimum: 1, maximum: 16, default: 1, expected: 'a replication factor from 1 to 16', description: 'replication factor of the topics created by code' }),
  TOPIC_BAN_HISTORY_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 180,
    expected: 'a number of days from 1 to 3650',
    description: 'how long the ban-history topic keeps every ban, lift and expiry (bans history, GET /v1/bans/{subject}/history)',
  }),
  TOPIC_AUTO_CREATE: Type.Boolean({ default: true, expected: 'true or false', description: 'services create or align the topics at start' }),

  /** Read by runService in a worker process: which worker it is. */
  BANSTREAM_WORKER: opt(Type.Integer({ minimum: 1, expected: 'a worker number from 1', description: 'set by a supervisor on each worker process it starts (1…workers); never set it yourself' })),

  REDIS_MODE: Type.Union([Type.Literal('standalone'), Type.Literal('cluster'), Type.Literal('sentinel')], {
    default: 'standalone',
    expected: 'standalone, cluster or sentinel',
    description:
      'the shape of the Redis the hard limits count in: one server (`REDIS_URL`), a Redis Cluster (`REDIS_CLUSTER_NODES`) or a primary watched by Sentinel (`REDIS_SENTINELS`, `REDIS_SENTINEL_MASTER`)',
  }),
  REDIS_URL: opt(
    Type.String({
      pattern: '^rediss?://',
      expected: 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6380',
      description: 'with `REDIS_MODE=standalone` (required then, and only then): the Redis the hard limits count in; `rediss://` turns TLS on',
    }),
  ),
  REDIS_CLUSTER_NODES: opt(
    Type.String({
      pattern: `^(${HOST_PORT})(,(${HOST_PORT}))*$`,
      expected: 'a comma-separated list of host:port, e.g. redis-1:6379,redis-2:6379',
      description: 'with `REDIS_MODE=cluster` (required then): some nodes of the Redis Cluster; the client learns the rest, and the slots, from them',
    }),
  ),
  REDIS_SENTINELS: opt(
    Type.String({
      pattern: `^(${HOST_PORT})(,(${HOST_PORT}))*$`,
      expected: 'a comma-separated list of host:port, e.g. sentinel-1:26379,sentinel-2:26379',
      description: 'with `REDIS_MODE=sentinel` (required then): the Sentinels to ask where the primary is',
    }),
  ),
  REDIS_SENTINEL_MASTER: opt(
    Type.String({
      pattern: '^[A-Za-z0-9._-]+$',
      maxLength: 200,
      expected: 'the master name the Sentinels monitor, e.g. mymaster',
      description: 'with `REDIS_MODE=sentinel` (required then): the name the Sentinels monitor the primary under',
    }),
  ),
  REDIS_SENTINEL_USERNAME: opt(
    Type.String({ minLength: 1, maxLength: 200, expected: 'a Sentinel ACL user name', description: 'with `REDIS_MODE=sentinel`: the user to authenticate to the Sentinels as, when they require one' }),
  ),
  REDIS_SENTINEL_PASSWORD: opt(
    Type.String({
      minLength: 1,
      expected: 'the password of the Sentinels',
      description: "with `REDIS_MODE=sentinel`: the Sentinels' password (`requirepass` of sentinel.conf), when they have one; prefer `REDIS_SENTINEL_PASSWORD_FILE`; never logged",
    }),
  ),
  REDIS_SENTINEL_PASSWORD_FILE: opt(
    Type.String({ minLength: 1, expected: 'the path of a file holding the Sentinel password', description: "a file holding the Sentinels' password instead of `REDIS_SENTINEL_PASSWORD`; not both" }),
  ),
  REDIS_USERNAME: opt(Type.String({ minLength: 1, maxLength: 200, expected: 'a Redis ACL user name', description: 'the ACL user to authenticate as (Redis 6+); unset: `default`, or none' })),
  REDIS_PASSWORD: opt(
    Type.String({ minLength: 1, expected: 'the password of the Redis user', description: 'the password of `REDIS_USERNAME` (or of `default`); prefer `REDIS_PASSWORD_FILE`; never logged' }),
  ),
  REDIS_PASSWORD_FILE: opt(
    Type.String({
      minLength: 1,
      expected: 'the path of a file holding the Redis password',
      description: 'a file holding the password instead of `REDIS_PASSWORD` (one trailing newline is ignored); not both',
    }),
  ),
  REDIS_TLS: Type.Boolean({
    default: false,
    expected: 'true or false',
    description: 'TLS to every Redis node (and Sentinel); the system CAs unless `REDIS_TLS_CA_FILE`; a `rediss://` `REDIS_URL` turns it on too',
  }),
  REDIS_TLS_CA_FILE: opt(
    Type.String({
      minLength: 1,
      expected: 'the path of a PEM file of CA certificates',
      description: 'with TLS: the CA certificates (PEM) the Redis server certificates are checked against, instead of the system CAs',
    }),
  ),
  REDIS_TLS_CERT_FILE: opt(
    Type.String({ minLength: 1, expected: 'the path of a PEM client certificate', description: 'with TLS: a client certificate (PEM) for servers with `tls-auth-clients`; with `REDIS_TLS_KEY_FILE`' }),
  ),
  REDIS_TLS_KEY_FILE: opt(Type.String({ minLength: 1, expected: 'the path of a PEM private key', description: "with TLS: the client certificate's private key (PEM); with `REDIS_TLS_CERT_FILE`" })),
} as const;

export type EnvName = keyof typeof env;

/**
 * How events count in time: read by the aggregator and by the control plane's
 * backtest, which must count as the aggregator does.
 */
export const countingEnv = {
  AGGREGATOR_GRACE_MS: Type.Integer({
    minimum: 0,
    maximum: 3_600_000,
    default: 5_000,
    expected: 'milliseconds from 0 to 3600000 (how late an event may arrive and still count)',
    description: "how late an event may be, behind its partition's newest, and still count (control reads it too, so backtests count alike)",
  }),
  AGGREGATOR_MAX_FUTURE_MS: Type.Integer({
    minimum: 0,
    maximum: 86_400_000,
    default: 5_000,
    expected: 'milliseconds from 0 to 86400000 (events dated further ahead of the time their record was received go to the DLQ)',
    description: 'events dated further ahead of the time their record was received go to the DLQ without moving any clock (a backtest skips them); keep it at least `INGEST_MAX_FUTURE_MS`',
  }),
};
