import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { costProblem, hashApiKey, normalisePath } from '@banstream/core';
import type { RequestEvent } from '@banstream/schemas';
import type { Decision, Enforcer } from './enforcer.js';
import { decisionHeaders, problemBody } from './http/rate-limit-headers.js';

/** Where request events go: the EdgePublisher (@banstream/edge) or anything with its publish(). */
export interface EventSink {
  publish(event: RequestEvent): void;
}

export interface BanstreamPluginOptions {
  enforcer: Enforcer;
  /** Publishes one event per request after the response, with its status. */
  publisher?: EventSink;
  /** Names this edge in its events. */
  edgeId: string;
  /**
   * The client address; default request.ip, the socket's peer. Behind proxies, give
   * Fastify's `trustProxy` the proxies' own addresses (`trustProxy: ['10.0.0.0/8']`),
   * never `true`: with `true`, request.ip is the leftmost X-Forwarded-For, which the
   * client writes itself (`X-Forwarded-For: 9.9.9.9` makes it 9.9.9.9), so any client
   * picks the address it is counted and banned as.
   */
  clientIp?: (request: FastifyRequest) => string;
  userId?: (request: FastifyRequest) => string | undefined;
  /** The client's country as the edge knows it (e.g. a CF-IPCountry header), checked and published. */
  country?: (request: FastifyRequest) => string | undefined;
  /** The client's region (ISO 3166-2) and AS number, if the edge knows them: checked and published, like the country. */
  region?: (request: FastifyRequest) => string | undefined;
  asn?: (request: FastifyRequest) => number | undefined;
  /** The clear API key, hashed before it is checked or published. */
  apiKey?: (request: FastifyRequest) => string | undefined;
  /** Request headers copied into events, for policies keyed on them (lower case; never credentials). */
  eventHeaders?: readonly string[];
  /**
   * What the request counts for (1 to 1,000,000; default 1), checked and published: a
   * bulk call of 50 items may cost 50. A policy's `costs` replace it for that policy.
   * Called once, when the request arrives, before its body is read: compute it from the
   * method, URL, route or headers. The value checked is the value published; one
   * outside the range is refused with a 500 (COST_OUT_OF_RANGE), the request not served.
   */
  cost?: (request: FastifyRequest) => number | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    banstream?: Decision;
  }
}

/**
 * Fastify plugin for edge services: every request is checked before its handler runs.
 * A denied request is answered here (429 or 403, problem+json, Retry-After with jitter,
 * RateLimit headers); an allowed one gets the RateLimit headers of its tightest quota.
 * After the response, its event (with the status) goes to the publisher.
 */
export const banstreamPlugin: FastifyPluginAsync<BanstreamPluginOptions> = async (app: FastifyInstance, options) => {
  const { enforcer, publisher } = options;
  const ipOf = options.clientIp ?? ((r: FastifyRequest) => r.ip);
  const headerNames = options.eventHeaders ?? [];
  const costs = new WeakMap<FastifyRequest, number>();

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const apiKey = options.apiKey?.(request);
    const userId = options.userId?.(request);
    const country = options.country?.(request);
    const region = options.region?.(request);
    const asn = options.asn?.(request);
    const cost = options.cost?.(request);
    // Refused below if out of range (a 500); still published, as 1, so the request is counted.
    if (cost !== undefined) costs.set(request, costProblem(cost) === undefined ? cost : 1);
    // The route template too: a policy keyed on `route` counts the published events'
    // route, so a check without it would never find that policy's bans or counts.
    const decision = await enforcer.check({
      ip: ipOf(request),
      method: request.method,
      host: request.host,
      path: request.url,
      headers: request.headers,
      route: request.routeOptions.url ?? null,
      ...(apiKey ? { apiKey } : {}),
      ...(userId ? { userId } : {}),
      ...(country ? { country } : {}),
      ...(region ? { region } : {}),
      ...(asn !== undefined ? { asn } : {}),
      ...(cost !== undefined ? { cost } : {}),
    });
    request.banstream = decision;
    reply.headers(decisionHeaders(decision));
    if (!decision.allowed) return reply.code(decision.status).type('application/problem+json').send(problemBody(decision));
    return undefined;
  });

  if (!publisher) return;
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const apiKey = options.apiKey?.(request);
    const headers: Record<string, string> = {};
    for (const name of headerNames) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    // Dated now, when the edge has answered, not when the request began: a client that
    // took longer than the aggregator's grace over its request (a slow body, a slow read)
    // would otherwise have every request counted late, that is never (issue 25).
    publisher.publish({
      eventId: randomUUID(),
      timestamp: Date.now(),
      ip: ipOf(request),
      country: options.country?.(request) ?? null,
      region: options.region?.(request) ?? null,
      asn: options.asn?.(request) ?? null,
      method: request.method,
      host: request.host,
      path: normalisePath(request.url),
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      userId: options.userId?.(request) ?? null,
      apiKeyHash: apiKey ? hashApiKey(apiKey) : null,
      headers,
      edgeId: options.edgeId,
      latencyMs: reply.elapsedTime,
      // The cost the check counted (a second call could answer otherwise, the body read by now).
      cost: costs.get(request) ?? 1,
    });
  });
};
// Hooks apply to the whole application, not only to routes registered inside the plugin.
(banstreamPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
