import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/problem.js';
import { allows, requiredRole, type Permission } from './roles.js';
import type { Principal, TokenBook } from './tokens.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a route needs; a route without one is public (the OpenAPI document). */
    permission?: Permission;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** The principal of an authenticated request (routes with a permission always have one). */
export function actorOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ApiError('UNAUTHENTICATED', 'not authenticated');
  return request.principal;
}

/**
 * Authenticates every route that declares a permission: a bearer token, checked
 * against the token hashes (401 when missing or unknown), and the role it carries
 * against the route's permission (403 naming the role needed). Runs in preParsing,
 * after the rate limiter's onRequest, and before any body is read.
 */
export function guard(app: FastifyInstance, tokens: TokenBook): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const permission = request.routeOptions.config.permission;
    if (permission === undefined) return payload;
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new ApiError('UNAUTHENTICATED', 'missing bearer token: send "Authorization: Bearer <token>" (the CLI reads BANSTREAM_TOKEN or --token-file)');
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new ApiError('UNAUTHENTICATED', 'malformed Authorization header: expected "Bearer <token>"');
    const principal = tokens.identify(match[1]!);
    if (!principal) throw new ApiError('UNAUTHENTICATED', 'unknown or revoked token');
    if (!allows(principal.role, permission)) {
      throw new ApiError('FORBIDDEN', `${principal.name} has the role ${principal.role}; ${request.method} ${request.routeOptions.url} needs ${requiredRole(permission)} (${permission})`);
    }
    request.principal = principal;
    return payload;
  });
}
