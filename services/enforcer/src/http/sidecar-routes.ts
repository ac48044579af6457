import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { BanstreamError, MAX_COST, type Cidr } from '@banstream/core';
import { sendProblem } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import type { AnswerBatch } from './answer-batch.js';
import { extAuthzRoutes } from './ext-authz-routes.js';
import { SocketTrust } from './forwarded.js';
import { DEFAULT_HEADER_NAMES, originalRequest, type ForwardedHeaderNames } from './original-request.js';
import { decisionHeaders, problemBody } from './rate-limit-headers.js';

const CheckBody = Type.Object(
  {
    ip: Type.String({ minLength: 1, maxLength: 64 }),
    method: Type.String({ minLength: 1, maxLength: 16 }),
    host: Type.String({ minLength: 1, maxLength: 253 }),
    path: Type.String({ minLength: 1, maxLength: 8192 }),
    route: Type.Optional(Type.String({ maxLength: 512 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 8192 }))),
    userId: Type.Optional(Type.String({ maxLength: 256 })),
    apiKey: Type.Optional(Type.String({ maxLength: 512 })),
    country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$' })),
    region: Type.Optional(Type.String({ maxLength: 16 })),
    asn: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    /** What the request counts for in hard limits (a policy's `costs` may replace it): 1 by default. */
    cost: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COST })),
  },
  { additionalProperties: false },
);
type CheckBody = Static<typeof CheckBody>;

/** The decision as /v1/check answers it (also the serializer Fastify compiles for it). */
const CheckAnswer = Type.Object({
  allowed: Type.Boolean(),
  status: Type.Number(),
  source: Type.String(),
  reason: Type.String(),
  policyId: Type.Optional(Type.String()),
  retryAfterSeconds: Type.Optional(Type.Number()),
  limit: Type.Optional(Type.Number()),
  remaining: Type.Optional(Type.Number()),
  previewDenies: Type.Optional(Type.Array(Type.Object({ policyId: Type.String(), source: Type.String(), reason: Type.String() }))),
});

const BansQuery = Type.Object(
  {
    scope: Type.Optional(Type.String({ pattern: '^[a-z_.-]+$' })),
    after: Type.Optional(Type.String({ maxLength: 1024 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export interface SidecarOptions {
  enforcer: Enforcer;
  /** Proxies whose client address and identity headers are believed on GET /v1/auth (ENFORCER_TRUSTED_PROXIES). */
  trustedProxies: readonly Cidr[];
  /** Who may call POST /v1/check and GET /v1/bans (ENFORCER_CALLERS); anyone when absent. */
  callers?: readonly Cidr[] | undefined;
  /** The headers GET /v1/auth reads the client from; DEFAULT_HEADER_NAMES when absent. */
  headerNames?: Partial<ForwardedHeaderNames> | undefined;
  /** Answers decided in one event-loop turn go out together (answer-batch.ts); without it, each as soon as decided. */
  answers?: AnswerBatch | undefined;
  /** Where Envoy's HTTP ext_authz checks are served (ENFORCER_EXT_AUTHZ_PREFIX); DEFAULT_EXT_AUTHZ_PREFIX when absent. */
  extAuthzPrefix?: string | undefined;
}

export const DEFAULT_EXT_AUTHZ_PREFIX = '/ext-authz';

/**
 * The sidecar's API for edges that cannot embed the library:
 * - POST /v1/check: a request described in JSON; the decision in JSON. Its caller is
 *   the edge itself, so the body's userId and apiKey are believed: hence only
 *   `callers` are answered (403 CALLER_NOT_TRUSTED for anyone else).
 * - GET /v1/auth: nginx `auth_request`. The original request
 *   is read from the forwarded headers (X-Original-Method, X-Original-URI,
 *   X-Forwarded-Host); the client address, user and API key from `headerNames`, and
 *   only when the socket's peer is a trusted proxy (original-request.ts). The answer
 *   is 204, or the denial status with the RateLimit headers, Retry-After and a
 *   problem+json body.
 * - any method on `extAuthzPrefix` and below: Envoy's HTTP ext_authz (ext-authz-routes.ts),
 *   believing the same headers from the same proxies as GET /v1/auth; 200 when allowed.
 * - GET /v1/bans: live bans, paged by subject, filterable by scope; `callers` only,
 *   as subjects name addresses and users.
 * Decisions of /v1/check and /v1/auth wait for `answers`, when given, to go out together.
 */
export async function sidecarRoutes(app: FastifyInstance, options: SidecarOptions): Promise<void> {
  const { enforcer, trustedProxies, answers } = options;
  const proxies = new SocketTrust(trustedProxies);
  const callers = options.callers ? new SocketTrust(options.callers) : undefined;
  // Before a body is read: an untrusted caller costs no parsing. A callback hook, not an
  // async one: no promise per request on the sidecar's hot route.
  const callersOnly = callers
    ? {
        onRequest: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
          if (callers.trusts(request.socket)) done();
          else untrustedCaller(reply, request);
        },
      }
    : {};
  const names: ForwardedHeaderNames = { ...DEFAULT_HEADER_NAMES, ...options.headerNames };

  app.post<{ Body: CheckBody }>(
    '/v1/check',
    {
      schema: { body: CheckBody, response: { 200: CheckAnswer } },
      ...callersOnly,
    },
    async (request, reply) => {
      let decision: Decision;
      try {
        decision = await enforcer.check(request.body);
      } catch (error) {
        return unreadable(reply, error);
      }
      const held = answers?.turn();
      if (held) await held;
      return reply.headers(decisionHeaders(decision)).send(decisionBody(decision));
    },
  );

  app.get('/v1/auth', async (request, reply) => {
    let decision: Decision;
    try {
      decision = await enforcer.check(originalRequest(request, proxies, trustedProxies, names));
    } catch (error) {
      return unreadable(reply, error);
    }
    const held = answers?.turn();
    if (held) await held;
    reply.headers(decisionHeaders(decision));
    if (decision.allowed) return reply.code(204).send();
    return reply.code(decision.status).type('application/problem+json').send(problemBody(decision));
  });

  await app.register(extAuthzRoutes, { enforcer, base: options.extAuthzPrefix ?? DEFAULT_EXT_AUTHZ_PREFIX, proxies, trustedProxies, names, answers });

  app.get<{ Querystring: Static<typeof BansQuery> }>('/v1/bans', { schema: { querystring: BansQuery }, ...callersOnly }, async (request, reply) => {
    // Listings run one at a time (BanCache.list): past a few waiting, a caller is told to come back.
    if (enforcer.bans.listingsPending >= MAX_PENDING_LISTINGS) return listingBusy(reply);
    const limit = request.query.limit ?? 100;
    const bans = await enforcer.bans.list(Date.now(), { limit, ...request.query });
    return { bans, next: bans.length === limit ? bans[bans.length - 1]!.subject : null };
  });
}

/** GET /v1/bans requests waiting for their turn beyond which the next is refused (503). */
const MAX_PENDING_LISTINGS = 8;

function listingBusy(reply: FastifyReply): FastifyReply {
  return sendProblem(reply.header('retry-after', '1'), 'BANS_LISTING_BUSY', `GET /v1/bans builds one page at a time and ${MAX_PENDING_LISTINGS} are waiting: try again shortly`);
}

function untrustedCaller(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendProblem(
    reply,
    'CALLER_NOT_TRUSTED',
    `${request.method} ${request.routeOptions.url ?? request.url} answers only ENFORCER_CALLERS; ${request.socket.remoteAddress ?? 'this peer'} is not one of them`,
  );
}

/** A request the enforcer cannot read (a bad address, say) is the caller's error: 400 naming it. Anything else is the server's. */
function unreadable(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof BanstreamError && (error.code.startsWith('SUBJECT_') || error.code === 'COST_OUT_OF_RANGE')) return sendProblem(reply, error.code, error.message);
  throw error;
}

/** Built field by field: object spreads are slow in Node 20, and this runs once per check. */
function decisionBody(d: Decision): Record<string, unknown> {
  const body: Record<string, unknown> = { allowed: d.allowed, status: d.status, source: d.source, reason: d.reason };
  if (d.policyId) body.policyId = d.policyId;
  if (d.retryAfterSeconds !== undefined) body.retryAfterSeconds = d.retryAfterSeconds;
  const limit = d.limit ?? d.quota?.limit;
  if (limit !== undefined) body.limit = limit;
  const remaining = d.remaining ?? d.quota?.remaining;
  if (remaining !== undefined) body.remaining = remaining;
  if (d.previewDenies.length > 0) body.previewDenies = d.previewDenies.map((c) => ({ policyId: c.policyId, source: c.source, reason: c.reason }));
  return body;
}
