import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { baseEnv, countingEnv, httpPort, type ConfigOf } from '@banstream/platform/entry';
import { kafkaEnv } from '@banstream/kafka/env';

const ms = (min: number, max: number, fallback: number, what: string, description: string) =>
  Type.Integer({ minimum: min, maximum: max, default: fallback, expected: `milliseconds from ${min} to ${max} (${what})`, description });
const positive = (fallback: number, what: string, description: string, min = 0) => Type.Number({ exclusiveMinimum: min, default: fallback, expected: `a number above ${min} (${what})`, description });
const CODE = '[A-Z]{2}(-[A-Z0-9]{1,3})?';
const OVERRIDE = `${CODE}:(ratio|z|minRate)=[0-9.]+(,(ratio|z|minRate)=[0-9.]+)*`;
const ZONE = `${CODE}=[A-Za-z][A-Za-z0-9_+/-]*`;

/** Geographic alerting (README "Geographic alerting"). */
const geoEnv = {
  GEO_ALERT_ENABLED: Type.Boolean({ default: true, expected: 'true or false', description: 'geographic spike alerting in the aggregator' }),
  GEO_ALERT_RATIO: positive(3, 'current rate over the baseline mean', 'an alert needs the rate at this many times the usual', 1),
  GEO_ALERT_Z: positive(5, 'z-score: standard deviations above the baseline mean', 'an alert needs this z-score'),
  GEO_ALERT_MIN_RATE: Type.Number({ minimum: 0, default: 1, expected: 'requests per second, 0 or more (least volume an alert needs)', description: 'an alert needs this many requests per second' }),
  GEO_ALERT_OVERRIDES: Type.String({
    pattern: `^(${OVERRIDE}(;${OVERRIDE})*)?$`,
    default: '',
    expected: 'CODE:key=value,…;… with keys ratio, z, minRate, e.g. US:minRate=50;FR-IDF:ratio=4,z=6',
    description: 'per country or region: `US:minRate=50;FR-IDF:ratio=4,z=6` (keys `ratio`, `z`, `minRate`)',
  }),
  GEO_ALERT_WARMUP_SAMPLES: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 30,
    expected: 'a count of samples from 1 (one sample per geo window)',
    description: 'samples an hour of the week needs before it can alert (one per geo window)',
  }),
  GEO_ALERT_RESOLVE_MS: ms(0, 86_400_000, 120_000, 'event time the rate must stay half way back before an alert resolves', 'event time the rate must stay half way back before `resolved`'),
  GEO_ALERT_COOLDOWN_MS: ms(
    0,
    604_800_000,
    900_000,
    'event time after a resolved alert during which the same code does not alert again',
    'event time after `resolved` before the same code can alert again',
  ),
  GEO_BASELINE_ALPHA: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1,
    default: 0.01,
    expected: 'a weight above 0, at most 1, for each new sample',
    description: 'weight of each new sample once an hour has 1/alpha of them',
  }),
  GEO_BASELINE_FLUSH_MS: ms(100, 3_600_000, 10_000, 'least time between two writes of one subject baseline', "least time between two writes of a country's learned state to the baselines topic"),
  GEO_TIME_ZONES: Type.String({
    pattern: `^(${ZONE}(,${ZONE})*)?$`,
    default: '',
    expected: 'CODE=Area/City,… e.g. FR=Europe/Paris,US=America/New_York',
    description: "local time of each code's hours of the week",
  }),
  GEO_DEFAULT_TIME_ZONE: Type.String({
    pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$',
    default: 'UTC',
    expected: 'an IANA time zone such as UTC or Europe/Paris',
    description: 'zone for the codes `GEO_TIME_ZONES` does not list',
  }),
  GEO_ALERT_WEBHOOK_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      expected: 'an http:// or https:// URL (Slack incoming webhooks work)',
      description: 'post every alert, fired and resolved, to this URL; never logged',
    }),
  ),
  GEO_ALERT_WEBHOOK_SECRET: Type.Optional(
    Type.String({ minLength: 16, expected: 'at least 16 characters, to sign webhook bodies', description: 'signs each webhook body (`X-Banstream-Signature`); never logged' }),
  ),
  GEO_ALERT_WEBHOOK_TIMEOUT_MS: ms(100, 120_000, 5_000, 'bound on one webhook request', 'bound on one webhook request'),
  GEO_ALERT_WEBHOOK_RETRIES: Type.Integer({ minimum: 0, maximum: 30, default: 8, expected: 'retries from 0 to 30 after a failed webhook request', description: 'webhook retries after a failure' }),
  GEO_ALERT_WEBHOOK_BACKOFF_MS: ms(
    1,
    60_000,
    1_000,
    'wait before the first webhook retry; doubles each time, at most a minute',
    'first wait before a webhook retry, doubling (jittered) up to a minute',
  ),
};

/** Every variable the aggregator reads; README "Configuration" lists them. */
export const aggregatorEnv = {
  ...baseEnv,
  ...kafkaEnv,
  HTTP_PORT: httpPort(8081),
  /** Instances with the same group share the events topic. */
  AGGREGATOR_GROUP_ID: Type.String({
    pattern: '^[A-Za-z0-9._-]+$',
    default: 'banstream-aggregator',
    expected: 'letters, digits, dot, dash or underscore',
    description: 'instances with the same group share the events (the second stage uses `<group>.subjects`)',
  }),
  ...countingEnv,
  AGGREGATOR_HOT_SHARE: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0.5,
    expected: 'a share from 0 to 1 of a policy threshold; counts at or above it are published',
    description: "share of a threshold from which a subject's count is published (0: every subject)",
  }),
  AGGREGATOR_COUNT_INTERVAL_MS: ms(10, 60_000, 250, 'least time between two publications of one subject count', "least time between two publications of one subject's count"),
  AGGREGATOR_TICK_MS: ms(5, 10_000, 50, 'how often counts, cool-downs and ban expiries are published', 'how often counts, cool-downs and ban expiries are published'),
  AGGREGATOR_GEO_WINDOW_MS: ms(1_000, 86_400_000, 60_000, 'window of the per-country and per-region counts', 'window of the per-country and per-region counts'),
  AGGREGATOR_SESSION_TIMEOUT_MS: ms(6_000, 300_000, 10_000, 'how soon the group notices a dead instance', 'how soon the group notices a dead instance and hands its partitions over'),
  /** Above 1, the process supervises that many aggregator processes, each a member of the groups (README "Using every core"). */
  AGGREGATOR_WORKERS: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: 1,
    expected: 'worker processes from 1 to 64 (one per core uses the whole machine)',
    description: 'aggregator processes under one supervisor, each a member of the groups (one per core uses the machine)',
  }),
  AGGREGATOR_FETCH_KB_PER_PARTITION: Type.Integer({
    minimum: 64,
    maximum: 65_536,
    default: 1_024,
    expected: 'KiB from 64 to 65536 (most events input one fetch takes per partition)',
    description: "most events input one fetch takes per partition: larger drains a backlog faster, smaller keeps an attacker's events from waiting behind a large fetch",
  }),
  /** A 1 MiB record of a few thousand events takes milliseconds; a legit 4 MiB fetch fits many times over. */
  AGGREGATOR_RECORD_BUDGET_MS: ms(
    10,
    600_000,
    5_000,
    'longest one input record may be in hand: past it the worker is killed and the record dead-lettered unhandled',
    'longest one input record may be in hand: past it the worker is killed and replaced, and the record dead-lettered unhandled (`RECORD_STALLED`)',
  ),
  AGGREGATOR_PUBLISH_STUCK_MS: ms(
    1_000,
    3_600_000,
    30_000,
    'a publication to Kafka failing for longer makes /readyz report not ready',
    'a publication to Kafka (counts and bans, the repartition, dead letters) under way for longer, retries included, makes `/readyz` report not ready',
  ),
  /** Unset: <tmpdir>/banstream-aggregator-<uid>. Must be this user's own and not writable by others: a trap skips a record. */
  AGGREGATOR_STATE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      expected: 'a directory path (records a worker stalled on are kept there)',
      description:
        "where the records a worker stalled on are kept, so no worker handles them again; must belong to the service's user and not be writable by others; unset: `<tmpdir>/banstream-aggregator-<uid>`",
    }),
  ),
  ...geoEnv,
};
export type AggregatorConfig = ConfigOf<typeof aggregatorEnv>;

/** Where the watchdog keeps the records a worker stalled on: AGGREGATOR_STATE_DIR, or this user's own directory under the system's temporary one. */
export function stateDirOf(config: Pick<AggregatorConfig, 'AGGREGATOR_STATE_DIR'>): string {
  return config.AGGREGATOR_STATE_DIR ?? join(tmpdir(), `banstream-aggregator-${process.getuid?.() ?? 'user'}`);
}
