import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { BanstreamError, type Cidr } from '@banstream/core';
import type { Decision, Enforcer } from '../enforcer.js';
import type { AnswerBatch } from './answer-batch.js';
import { clientIp } from './forwarded.js';
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
  },
  { additionalProperties: false },
);
type CheckBody = Static<typeof CheckBody>;

/** The decision as /v1/check answers it (also the serializer Fastify compiles for it). */
const CheckAnswer = Type.Object({
  allowed: Type.Boolean(), status: Type.Number(), source: Type.String(), reason: Type.String(),
  policyId: Type.Optional(Type.String()), retryAfterSeconds: Type.Optional(Type.Number()),
  limit: Type.Optional(Type.Number()), remaining: Type.Optional(Type.Number()),
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
  trustedProxies: readonly Cidr[];
  /** Answers decided in one event-loop turn go out together (answer-batch.ts); without it, each as soon as decided. */
  answers?: AnswerBatch | undefined;
}

/**
 * The sidecar's API for edges that cannot embed the library:
 * - POST /v1/check: a request described in JSON; the decision in JSON.
 * - GET /v1/auth: nginx `auth_request` and Envoy HTTP ext_authz. The original request
 *   is read from the forwarded headers (X-Forwarded-For through trusted proxies,
 *   X-Original-Method, X-Original-URI, X-Forwarded-Host); the answer is 204, or the
 *   denial status with the RateLimit headers, Retry-After and a problem+json body.
 * - GET /v1/bans: live bans, paged by subject, filterable by scope.
 * Decisions of /v1/check and /v1/auth wait for `answers`, when given, to go out together.
 */
export async function sidecarRoutes(app: FastifyInstance, options: SidecarOptions): Promise<void> {
  const { enforcer, trustedProxies, answers } = options;

  app.post<{ Body: CheckBody }>('/v1/check', { schema: { body: CheckBody, response: { 200: CheckAnswer } } }, async (request, reply) => {
    let decision: Decision;
    try {
      decision = await enforcer.check(request.body);
    } catch (error) {
      return unreadable(reply, error);
    }
    const held = answers?.turn();
    if (held) await held;
    return reply.headers(decisionHeaders(decision)).send(decisionBody(decision));
  });

  app.get('/v1/auth', async (request, reply) => {
    let decision: Decision;
    try {
      decision = await enforcer.check(originalRequest(request, trustedProxies));
    } catch (error) {
      return unreadable(reply, error);
    }
    const held = answers?.turn();
    if (held) await held;
    reply.headers(decisionHeaders(decision));
    if (decision.allowed) return reply.code(204).send();
    return reply.code(decision.status).type('application/problem+json').send(problemBody(decision));
  });

  app.get<{ Querystring: Static<typeof BansQuery> }>('/v1/bans', { schema: { querystring: BansQuery } }, async (request) => {
    const limit = request.query.limit ?? 100;
    const bans = enforcer.bans.list(Date.now(), { limit, ...request.query });
    return { bans, next: bans.length === limit ? bans[bans.length - 1]!.subject : null };
  });
}

/** A request the enforcer cannot read (a bad address, say) is the caller's error: 400 naming it. Anything else is the server's. */
function unreadable(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof BanstreamError && error.code.startsWith('SUBJECT_')) {
    return reply.code(400).type('application/problem+json').send({ type: 'about:blank', title: 'Bad request', status: 400, detail: error.message, code: error.code });
  }
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

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The request nginx or Envoy is asking about, from the headers they forward. */
function originalRequest(request: FastifyRequest, trusted: readonly Cidr[]) {
  const uri = header(request, 'x-original-uri') ?? header(request, 'x-envoy-original-path') ?? '/';
  return {
    ip: clientIp(request.socket.remoteAddress ?? '', header(request, 'x-forwarded-for') ?? header(request, 'x-real-ip'), trusted),
    method: header(request, 'x-original-method') ?? header(request, 'x-forwarded-method') ?? 'GET',
    host: header(request, 'x-forwarded-host') ?? header(request, 'host') ?? '',
    path: uri,
    headers: request.headers,
    ...(header(request, 'x-user-id') ? { userId: header(request, 'x-user-id')! } : {}),
    ...(header(request, 'x-api-key') ? { apiKey: header(request, 'x-api-key')! } : {}),
  };
}
