import { Type } from '@sinclair/typebox';
import { baseEnv, httpPort, redisEnv, type ConfigOf } from '@banstream/platform';
import { kafkaEnv } from '@banstream/kafka';
import { hardLimitEnv } from './hard/config.js';
import { DEFAULT_MAX_BANS, MAX_BANS_LIMIT } from './cache/ban-cache.js';

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+.^_`|~-]*$";

/** A header GET /v1/auth reads one context attribute from, on trusted proxies' requests only; none by default. */
function contextHeader(what: string) {
  return Type.String({
    default: 'none',
    minLength: 1,
    maxLength: 64,
    pattern: HEADER_NAME,
    expected: `the header a trusted proxy puts ${what} in, or none (bans and policies on it are then not applied by GET /v1/auth)`,
    description: `the header a trusted proxy puts ${what} in, for \`GET /v1/auth\`; another value is a 400 naming the header; with \`none\`, bans and policies on that scope are not applied there (logged, and counted by \`banstream_enforcer_auth_unenforceable\`)`,
  });
}

/** Every variable the enforcer sidecar reads; README "Configuration" lists them. */
export const enforcerEnv = {
  ...baseEnv,
  ...kafkaEnv,
  ...redisEnv,
  ...hardLimitEnv,
  HTTP_PORT: httpPort(8082),
  ENFORCER_TRUSTED_PROXIES: Type.String({
    default: '127.0.0.1,::1',
    pattern: '^[0-9A-Fa-f:./, ]*$',
    expected: 'comma-separated addresses or CIDRs of the proxies whose client address, user and API key headers GET /v1/auth believes, e.g. 127.0.0.1,10.0.0.0/8',
    description: "addresses or CIDRs of the proxies whose client address and identity headers `GET /v1/auth` believes; from anyone else the address is the peer's and there is no user or API key",
  }),
  ENFORCER_CLIENT_IP_HEADER: Type.String({
    default: 'x-forwarded-for',
    minLength: 1,
    maxLength: 64,
    pattern: HEADER_NAME,
    expected: 'the one header a trusted proxy puts the client address in: x-forwarded-for (read from the right) or x-real-ip, say',
    description: 'the one header a trusted proxy puts the client address in (a list read from the right); `x-real-ip` for a proxy that sets only that',
  }),
  ENFORCER_USER_HEADER: Type.String({
    default: 'x-banstream-user',
    minLength: 1,
    maxLength: 64,
    pattern: HEADER_NAME,
    expected: 'the header a trusted proxy puts the authenticated user id in (none: no user is read)',
    description: 'the header a trusted proxy puts the user it authenticated in; `none` reads none',
  }),
  ENFORCER_API_KEY_HEADER: Type.String({
    default: 'x-banstream-api-key',
    minLength: 1,
    maxLength: 64,
    pattern: HEADER_NAME,
    expected: 'the header a trusted proxy puts the checked API key in, in clear (none: no key is read)',
    description: 'the header a trusted proxy puts the API key it checked in (in clear); `none` reads none',
  }),
  ENFORCER_COUNTRY_HEADER: contextHeader("the client's country as an ISO 3166-1 alpha-2 code (AU), from the proxy's GeoIP lookup"),
  ENFORCER_REGION_HEADER: contextHeader("the client's region as an ISO 3166-2 code (FR-IDF)"),
  ENFORCER_ASN_HEADER: contextHeader("the client's autonomous system number in decimal (13335)"),
  ENFORCER_ROUTE_HEADER: contextHeader('the route template the request matched (/users/:id), at most 512 characters'),
  ENFORCER_CALLERS: Type.String({
    default: '127.0.0.1,::1',
    pattern: '^[0-9A-Fa-f:./, ]*$',
    expected: 'comma-separated addresses or CIDRs that may call POST /v1/check (whose user and API key are believed) and GET /v1/bans; 0.0.0.0/0,::/0 for anyone',
    description: 'addresses or CIDRs that may call `POST /v1/check` (whose `userId` and `apiKey` are believed) and `GET /v1/bans`; others get 403 `CALLER_NOT_TRUSTED`; `0.0.0.0/0,::/0` for anyone',
  }),
  ENFORCER_EXT_AUTHZ_PREFIX: Type.String({
    default: '/ext-authz',
    maxLength: 64,
    pattern: '^(/[A-Za-z0-9._~-]+)+$',
    expected: "a path such as /ext-authz (no trailing slash): the path_prefix of Envoy's HTTP ext_authz filter",
    description: "where Envoy's HTTP ext_authz checks are answered: any method on this path and below, the original path after it (the filter's `path_prefix`); 200 when allowed",
  }),
  ENFORCER_GRPC_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 0,
    expected: 'a TCP port from 1 to 65535 for the gRPC ext_authz service, or 0 for none',
    description: "where `envoy.service.auth.v3.Authorization/Check` (Envoy's gRPC ext_authz) is served, on `HTTP_HOST`; 0 (the default) serves none",
  }),
  ENFORCER_GRPC_MAX_MESSAGE_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 4 * 1024 * 1024,
    default: 128 * 1024,
    expected: 'bytes from 1024 to 4194304: the largest CheckRequest the gRPC service reads',
    description:
      "the largest CheckRequest the gRPC service reads (Envoy's request headers are at most 60 KiB by default, plus any body the filter sends); a larger one fails `RESOURCE_EXHAUSTED` unread",
  }),
  ENFORCER_GRPC_DEADLINE_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 5_000,
    expected: 'milliseconds from 10 to 60000 a gRPC check may wait for its decision',
    description: "how long a gRPC check may wait for its decision whatever deadline its client set, then `DEADLINE_EXCEEDED`; Envoy's own `timeout` (200 ms by default) usually ends it first",
  }),
  ENFORCER_BATCH_ANSWERS: Type.Boolean({
    default: true,
    expected: 'true or false: whether the answers decided in one event-loop turn are written together (fewer client wake-ups under load)',
    description: "the sidecar's answers decided in one event-loop turn are written together (fewer client wake-ups under load); false writes each at once",
  }),
  ENFORCER_WARMUP_MODE: Type.Union([Type.Literal('closed'), Type.Literal('open')], {
    default: 'closed',
    expected: 'closed or open: what answers a request no policy applies to while the caches are still loading (closed: 429 with Retry-After)',
    description: 'until the caches have caught up, what answers a request no async policy applies to: `closed` (429, `Retry-After: 1`) or `open`',
  }),
  ENFORCER_WARMUP_WAIT_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 3_000,
    expected: 'milliseconds from 0 to 60000 a check waits for the policies and the allowlist after a start before deciding without them',
    description: 'how long a check made before the policies and allowlist are read waits for them before deciding without them',
  }),
  ENFORCER_MAX_BANS: Type.Integer({
    minimum: 1,
    maximum: MAX_BANS_LIMIT,
    default: DEFAULT_MAX_BANS,
    expected: `a whole number from 1 to ${MAX_BANS_LIMIT}: the most bans one enforcer holds before it refuses new ones`,
    description:
      'the most bans the enforcer holds (every kind together); past it a ban on a subject not held is refused, counted by `banstream_enforcer_bans_refused_total` and logged, unless it is manual; bans held are kept. Size the heap for it: see [capacity](capacity.md)',
  }),
  ENFORCER_PURGE_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 5_000,
    expected: 'milliseconds from 100 to 600000 between purges of expired cache entries',
    description: 'how often the enforcer drops expired bans, stale counts and expired allowlist entries',
  }),
};
export type EnforcerConfig = ConfigOf<typeof enforcerEnv>;
