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

export type Authentication = { readonly principal: Principal; readonly session?: SessionProof } | { readonly problem: string };

/** What a console session cookie proves: who signed in, and the CSRF token their writes must carry. */
export interface SessionProof {
  readonly principal: Principal;
  readonly csrf: string;
}

/**
 * The console's half of authentication (console/): the session a request's cookie names,
 * and whether the request carries that session's CSRF token. Absent, only bearer tokens count.
 */
export interface SessionAuth {
  sessionOf(request: FastifyRequest): SessionProof | undefined;
  /** True when the request may act with the session: a safe method, or the session's CSRF token in its header. */
  csrfOk(request: FastifyRequest, session: SessionProof): boolean;
}

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
 * A bearer token when the request has an Authorization header; else the console
 * session its cookie names (when the console is on); else why neither proves anything.
 * A bad Authorization header is not rescued by a cookie: the caller meant the token.
 */
export function authenticateRequest(request: FastifyRequest, tokens: TokenBook, sessions: SessionAuth | undefined): Authentication {
  const header = request.headers.authorization;
  if (header === undefined && sessions !== undefined) {
    const session = sessions.sessionOf(request);
    if (session !== undefined) return { principal: session.principal, session };
  }
  return authenticate(header, tokens);
}

/**
 * Authenticates every request in onRequest (register this before the rate limiter,
 * so it can key on the result), then, in preParsing and before any body is read,
 * refuses a route's request without a known token or session (401), a write through
 * a session without its CSRF token (403 CSRF_INVALID), or one whose role lacks the
 * route's permission (403 naming the role needed). A session maps to the role of the
 * token that opened it, so the role check is the same either way.
 */
export function guard(app: FastifyInstance, tokens: TokenBook, sessions?: SessionAuth): void {
  app.addHook('onRequest', async (request) => {
    request.authentication = authenticateRequest(request, tokens, sessions);
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    const permission = request.routeOptions.config.permission;
    if (permission === undefined) return payload;
    const auth = request.authentication ?? authenticateRequest(request, tokens, sessions);
    if (!('principal' in auth)) throw new ProblemError('UNAUTHENTICATED', auth.problem);
    if (auth.session !== undefined && !sessions!.csrfOk(request, auth.session)) {
      throw new ProblemError('CSRF_INVALID', `${request.method} with a console session needs the session's CSRF token in the x-csrf-token header`);
    }
    const { principal } = auth;
    if (!allows(principal.role, permission)) {
      throw new ProblemError('FORBIDDEN', `${principal.name} has the role ${principal.role}; ${request.method} ${request.routeOptions.url} needs ${requiredRole(permission)} (${permission})`);
    }
    request.principal = principal;
    return payload;
  });
}
