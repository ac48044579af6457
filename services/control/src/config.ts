import { Type } from '@sinclair/typebox';
import { ROLES, ROLES_TEXT } from '@banstream/api';
import { baseEnv, countingEnv, httpPort, type ConfigOf } from '@banstream/platform';
import { kafkaEnv } from '@banstream/kafka';
import { DEFAULT_MAX_BAN_DURATION, DEFAULT_MIN_PREFIX } from './guards/index.js';

const TOKEN_ENTRY = `[A-Za-z0-9._@-]+:(${ROLES.join('|')}):[0-9a-f]{64}`;

/** Every variable the control service reads; README "Configuration" lists them. */
export const controlEnv = {
  ...baseEnv,
  ...kafkaEnv,
  HTTP_PORT: httpPort(8083),
  /** Token hashes inline: `name:role:sha256hex`, comma-separated. Never the tokens themselves. */
  CONTROL_TOKENS: Type.Optional(
    Type.String({
      pattern: `^(${TOKEN_ENTRY})(,${TOKEN_ENTRY})*$`,
      expected: `comma-separated name:role:sha256hex entries (role ${ROLES_TEXT}; \`banstream token new\` prints one)`,
      description: 'API tokens of the control service as `name:role:sha256hex[,…]`, hashes only (`banstream token new` prints an entry)',
    }),
  ),
  /** The same entries in a file, one per line; # starts a comment. */
  CONTROL_TOKENS_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      expected: 'the path of a file of name:role:sha256hex lines',
      description: 'a file of the same entries as `CONTROL_TOKENS`, one a line, `#` comments; both may be given',
    }),
  ),
  CONTROL_RATE_LIMIT: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 600,
    expected: 'requests per minute one client (token, or address without one) may make',
    description: "requests a minute one client (an authenticated token's name, else the client address) may make to the control API",
  }),
  CONTROL_BAN_SWEEP_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 5_000,
    expected: 'milliseconds between tombstones for expired manual bans and checks for feeds due a refresh',
    description: 'how often the control service lifts manual bans past their expiry and looks for blocklist feeds due a refresh',
  }),
  /** Guard rails: a wider network needs `force` (and is audited as forced). */
  CONTROL_MIN_PREFIX_V4: Type.Integer({
    minimum: 0,
    maximum: 32,
    default: DEFAULT_MIN_PREFIX.v4,
    expected: 'a prefix length from 0 to 32: the widest IPv4 network a manual ban or allowlist entry may cover without force',
    description: 'the widest IPv4 network a manual ban or allowlist entry may cover without `force` (IPv4-mapped networks count as IPv4)',
  }),
  CONTROL_MIN_PREFIX_V6: Type.Integer({
    minimum: 0,
    maximum: 128,
    default: DEFAULT_MIN_PREFIX.v6,
    expected: 'a prefix length from 0 to 128: the widest IPv6 network a manual ban or allowlist entry may cover without force',
    description: 'the widest IPv6 network a manual ban or allowlist entry may cover without `force`',
  }),
  /** Force does not lift this one. Six digits at most, so any value fits in a safe integer of milliseconds. */
  CONTROL_MAX_BAN_DURATION: Type.String({
    pattern: '^[1-9][0-9]{0,5}(ms|s|m|h|d)$',
    default: DEFAULT_MAX_BAN_DURATION,
    expected: 'a duration such as 30d or 12h: the longest manual ban',
    description: 'the longest manual ban (`ms`, `s`, `m`, `h`, `d`); `force` does not lift it',
  }),
  CONTROL_ALERTS_KEPT: Type.Integer({
    minimum: 10,
    maximum: 1_000_000,
    default: 1_000,
    expected: 'how many recent alerts the service keeps in memory',
    description: 'recent alerts the control service keeps in memory for `GET /v1/alerts`',
  }),
  /** Blocklist feeds (feeds/): every source is someone else's, so each read is bounded. */
  CONTROL_FEED_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 30_000,
    expected: 'milliseconds a feed read may take, connecting to the last byte',
    description: 'how long reading a blocklist feed may take, from connecting to the last byte; a slower source is refused and its bans kept',
  }),
  CONTROL_FEED_MAX_BYTES: Type.Integer({
    minimum: 1_024,
    maximum: 1_073_741_824,
    default: 67_108_864,
    expected: 'the largest feed source in bytes',
    description: 'the largest blocklist feed source, in bytes; a larger one is refused whole and its bans kept',
  }),
  CONTROL_FEED_MAX_LINES: Type.Integer({
    minimum: 1,
    maximum: 100_000_000,
    default: 5_000_000,
    expected: 'the most lines a feed source may have',
    description: 'the most lines a blocklist feed source may have, comments included; a longer one is refused whole',
  }),
  CONTROL_FEED_MAX_INVALID_PERCENT: Type.Integer({
    minimum: 0,
    maximum: 100,
    default: 5,
    expected: 'a percentage: the share of data lines that may be malformed',
    description: "the share of a feed's data lines (not comments) that may be neither an address nor a network; past it the refresh is refused whole and the bans kept",
  }),
  CONTROL_FEED_MAX_LIFT_PERCENT: Type.Integer({
    minimum: 0,
    maximum: 100,
    default: 50,
    expected: "a percentage: the share of a feed's bans one refresh may lift without force",
    description: "the share of a feed's bans one refresh may lift; more (or a source that lists nothing) is refused unless synced with force",
  }),
  CONTROL_FEED_FILE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      expected: 'the directory feed file sources must lie in',
      description: 'the directory blocklist feeds may name files in; unset, feeds are read over http(s) only',
    }),
  ),
  /** Feeds reach public addresses only (feeds/address-guard.ts); these networks too. */
  CONTROL_FEED_ALLOWED_NETWORKS: Type.String({
    default: '',
    pattern: '^[0-9A-Fa-f:./, ]*$',
    expected: 'comma-separated addresses or CIDRs blocklist feeds may reach besides public addresses, e.g. 10.20.0.0/16,fd00:1::/48',
    description:
      'networks (addresses or CIDRs, comma-separated) blocklist feeds may connect to besides public unicast addresses; empty (the default): loopback, private, link-local, shared (CGNAT), multicast and reserved addresses are refused, in URLs, redirects and resolved names',
  }),
  CONTROL_QUERY_MAX_SCANNED: Type.Integer({
    minimum: 100,
    maximum: 10_000_000,
    default: 100_000,
    expected: 'how many records one history or audit query reads at most',
    description: 'records one `GET /v1/bans/{subject}/history` or `GET /v1/audit` page reads at most before it answers with a `next` cursor',
  }),
  CONTROL_QUERY_BUDGET_MS: Type.Integer({
    minimum: 1_000,
    maximum: 120_000,
    default: 10_000,
    expected: 'the longest a history or audit query reads, in ms',
    description: 'time one history or audit page may read before it answers with what it found and a `next` cursor; two queries read at once, the others wait',
  }),
  /** The web console (console/): served at /console, signing in exchanges an API token for a session cookie. */
  CONTROL_CONSOLE: Type.Boolean({
    default: true,
    expected: 'true or false',
    description: 'serve the web console at `/console` and accept its session cookie (with its CSRF token on writes) on the API',
  }),
  CONTROL_CONSOLE_SESSION_TTL: Type.String({
    pattern: '^[1-9][0-9]{0,5}(s|m|h|d)$',
    default: '8h',
    expected: 'a duration such as 8h or 30m: how long a console session lasts after sign-in',
    description: 'how long a console session lasts after sign-in (`s`, `m`, `h`, `d`); then the user signs in again',
  }),
  CONTROL_CONSOLE_MAX_SESSIONS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 1_000,
    expected: 'how many console sessions are held at once',
    description: 'console sessions held at once; a sign-in past it ends the oldest session of the token holding the most (a token holds at most 10)',
  }),
  CONTROL_CONSOLE_MAX_STREAMS: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 50,
    expected: 'how many live overview streams may be open at once',
    description: 'live overview streams (server-sent events) open at once, one per session and at most 3 per token; more are refused with 429',
  }),
  CONTROL_CONSOLE_TICK_MS: Type.Integer({
    minimum: 200,
    maximum: 60_000,
    default: 1_000,
    expected: 'milliseconds between two overview updates',
    description: "how often the console's overview is recomputed and pushed to each open stream",
  }),
  CONTROL_CONSOLE_METRICS_URLS: Type.Optional(
    Type.String({
      pattern: '^https?://[^,\\s]+(,https?://[^,\\s]+)*$',
      expected: 'comma-separated base URLs of aggregators and enforcers, such as http://127.0.0.1:8081,http://127.0.0.1:8082',
      description:
        "aggregators and enforcers whose `/metrics` the console's overview reads (events counted, denials by source, rate per country against its baseline); unset, the overview shows what the topics tell",
    }),
  ),
  /** A backtest counts as the aggregator does: same grace and future bound. */
  ...countingEnv,
};
export type ControlConfig = ConfigOf<typeof controlEnv>;
