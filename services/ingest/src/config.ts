import { Type } from '@sinclair/typebox';
import { baseEnv, httpPort, type ConfigOf } from '@banstream/platform';
import { kafkaEnv } from '@banstream/kafka';

const MIB = 1024 * 1024;

/** Every variable the gateway reads; README "Configuration" lists them. */
export const ingestEnv = {
  ...baseEnv,
  ...kafkaEnv,
  HTTP_PORT: httpPort(8080),
  /** Unset: the gateway does not start unless INGEST_ALLOW_ANONYMOUS_EDGES says so. Never logged (loadConfig redacts *TOKEN* values). */
  INGEST_EDGE_TOKENS: Type.Optional(
    Type.String({
      pattern: String.raw`^[^,\s]{16,}(,[^,\s]{16,})*$`,
      expected: 'comma-separated edge tokens of at least 16 characters, without spaces',
      description: 'comma-separated bearer tokens edges must send to `POST /v1/events`; never logged. Without them the gateway does not start (exit 78) unless `INGEST_ALLOW_ANONYMOUS_EDGES=true`',
    }),
  ),
  /** The same tokens from a file (a mounted secret), so they need not sit in the environment. */
  INGEST_EDGE_TOKENS_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      expected: 'a path to a file of edge tokens',
      description: 'a file of edge tokens, one a line (or comma-separated), `#` comments; with `INGEST_EDGE_TOKENS` both are accepted. Read at start; never logged',
    }),
  ),
  /** An explicit opt-in: without tokens, anyone who reaches the gateway can post events. */
  INGEST_ALLOW_ANONYMOUS_EDGES: Type.Boolean({
    default: false,
    expected: 'true or false: accept events without an edge token when INGEST_EDGE_TOKENS is unset',
    description: 'true: with no `INGEST_EDGE_TOKENS`, accept events without a token (`npm start` and `docker-compose.yml` set it for their loopback-only gateway)',
  }),
  INGEST_BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 256 * MIB,
    default: 4 * MIB,
    expected: 'bytes from 1024 to 268435456 (largest accepted request body)',
    description: 'largest request body; larger gets 413',
  }),
  INGEST_BUFFER_BYTES: Type.Integer({
    minimum: 64 * 1024,
    maximum: 64 * 1024 * MIB,
    default: 64 * MIB,
    expected: 'bytes from 65536 (memory budget of events not yet acknowledged by Kafka)',
    description: 'memory budget of events not yet acknowledged by Kafka; when a batch does not fit the gateway answers 503',
  }),
  INGEST_LINGER_MS: Type.Integer({
    minimum: 0,
    maximum: 1_000,
    default: 5,
    expected: 'milliseconds from 0 to 1000 (longest wait before a partly filled send)',
    description: 'longest wait before a partly filled send to Kafka',
  }),
  INGEST_MAX_FUTURE_MS: Type.Integer({
    minimum: 0,
    maximum: 3_600_000,
    default: 5_000,
    expected: 'milliseconds from 0 to 3600000 (how far ahead of the gateway clock an event may be dated)',
    description: "an event dated further ahead of the gateway's clock is refused (400, naming it and how far ahead); it allows for an edge's clock error",
  }),
  INGEST_RETRY_AFTER_SECONDS: Type.Integer({ minimum: 1, maximum: 3_600, default: 1, expected: 'seconds from 1 to 3600 (Retry-After of a 503)', description: '`Retry-After` of a 503' }),
  /** Unset: events keep the geography they come with. */
  INGEST_GEOIP_DB: Type.Optional(
    Type.String({
      minLength: 1,
      expected: 'the path of an MMDB file (MaxMind GeoIP2/GeoLite2 Country or City, or a compatible one)',
      description: 'an MMDB file giving events without a country their country, region and ASN; unset: no enrichment',
    }),
  ),
};
export type IngestConfig = ConfigOf<typeof ingestEnv>;
