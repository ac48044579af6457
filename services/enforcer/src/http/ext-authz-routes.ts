import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BanstreamError, type Cidr } from '@banstream/core';
import { sendProblem } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import type { AnswerBatch } from './answer-batch.js';
import type { SocketTrust } from './forwarded.js';
import { extAuthzRequest, type ForwardedHeaderNames } from './original-request.js';
import { decisionHeaders, problemBody } from './rate-limit-headers.js';

/**
 * The most request body an HTTP ext_authz check may carry (Envoy sends one only with
 * `with_request_body`): it is read and dropped, never decided on; more is a 413.
 */
export const EXT_AUTHZ_BODY_LIMIT = 8 * 1024;

export interface ExtAuthzOptions {
  enforcer: Enforcer;
  /**
   * Where the checks are served (ENFORCER_EXT_AUTHZ_PREFIX, the filter's path_prefix): `/ext-authz`.
   * Not named `prefix`: Fastify's register would take that as a prefix for the routes.
   */
  base: string;
  proxies: SocketTrust;
  trustedProxies: readonly Cidr[];
  names: ForwardedHeaderNames;
  answers?: AnswerBatch | undefined;
}

/**
 * Envoy's HTTP ext_authz: Envoy sends the original request's method, and its path after
 * the filter's path_prefix, to `base` + path; only a 200 lets the request through.
 * Any method and any path under `base` is a check: 200 with the decision's headers,
 * or the denial's status (403, 429) with them, Retry-After and a problem+json body.
 * Registered on its own so its body handling (any type, read and dropped, at most
 * EXT_AUTHZ_BODY_LIMIT) leaves the other routes' JSON parsing alone.
 */
export async function extAuthzRoutes(app: FastifyInstance, options: ExtAuthzOptions): Promise<void> {
  const { enforcer, base, proxies, trustedProxies, names, answers } = options;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: EXT_AUTHZ_BODY_LIMIT }, (_request, _body, done) => done(null, undefined));

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let decision: Decision;
    try {
      decision = await enforcer.check(extAuthzRequest(request, base, proxies, trustedProxies, names));
    } catch (error) {
      if (error instanceof BanstreamError && error.code.startsWith('SUBJECT_')) return sendProblem(reply, error.code, error.message);
      throw error;
    }
    const held = answers?.turn();
    if (held) await held;
    reply.headers(decisionHeaders(decision));
    if (decision.allowed) return reply.code(200).send();
    return reply.code(decision.status).type('application/problem+json').send(problemBody(decision));
  };
  app.all(base, handler);
  app.all(`${base}/*`, handler);
}
