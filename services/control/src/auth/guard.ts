import { ProblemError } from '@banstream/platform';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allows, requiredRole, type Permission } from '@banstream/api';
import type { Principal, TokenBook } from './tokens.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a route needs; a route without one is public (the OpenAPI document). */
    permission?: Permission;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** Who the Authorization header proves the caller to be, or why it proves nothing (authenticate). */
    authentication?: Authentication;
  }
}

export type Authentication = { readonly principal: Principal } | { readonly problem: string };

/** The principal of an authenticated request (routes with a permission always have one). */
export function actorOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ProblemError('UNAUTHENTICATED', 'not authenticated');
  return request.principal;
}

/** A bearer token checked against the token hashes: the principal, or why there is none. */
export function authenticate(header: string | undefined, tokens: TokenBook): Authentication {
  if (header === undefined || header === '') {
    return { problem: 'missing bearer token: send "Authorization: Bearer <token>" (the CLI reads BANSTREAM_TOKEN or --token-file)' };
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { problem: 'malformed Authorization header: expected "Bearer <token>"' };
  const principal = tokens.identify(match[1]!);
  return principal ? { principal } : { problem: 'unknown or revoked token' };
}

/**
 * Who is asking, for the rate limiter: the authenticated principal, else the client
 * address. Keying on the header itself would let a client reset its limit by sending
 * a new bogus token with each request.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const auth = request.authentication;
  return auth !== undefined && 'principal' in auth ? `p:${auth.principal.name}` : `a:${request.ip}`;
}

/**
 * Authenticates every request in onRequest (register this before the rate limiter,
 * so it can key on the result), then, in preParsing and before any body is read,
 * refuses a route's request without a known token (401) or whose role lacks the
 * route's permission (403 naming the role needed).
 */
export function guard(app: FastifyInstance, tokens: TokenBook): void {
  app.addHook('onRequest', async (request) => {
    request.authentication = authenticate(request.headers.authorization, tokens);
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    const permission = request.routeOptions.config.permission;
    if (permission === undefined) return payload;
    const auth = request.authentication ?? authenticate(request.headers.authorization, tokens);
    if (!('principal' in auth)) throw new ProblemError('UNAUTHENTICATED', auth.problem);
    const { principal } = auth;
    if (!allows(principal.role, permission)) {
      throw new ProblemError('FORBIDDEN', `${principal.name} has the role ${principal.role}; ${request.method} ${request.routeOptions.url} needs ${requiredRole(permission)} (${permission})`);
    }
    request.principal = principal;
    return payload;
  });
}
