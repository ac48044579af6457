import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { Type, type Static } from '@sinclair/typebox';
import { ProblemError } from '@banstream/platform';
import type { TokenBook } from '../auth/tokens.js';
import type { ConsoleAssets } from './assets.js';
import { clearedSessionCookie, readSessionCookie, sessionCookie } from './cookies.js';
import { CSRF_HEADER, csrfMatches } from './csrf.js';
import { CONSOLE_HEADERS } from './security-headers.js';
import type { Session, SessionStore } from './sessions.js';
import type { StreamHub } from './streams.js';

export interface ConsoleRoutesOptions {
  tokens: TokenBook;
  sessions: SessionStore;
  hub: StreamHub;
  assets: ConsoleAssets | undefined;
  /** Requests a minute per client address to /console (sign-in attempts included). */
  rateLimit: number;
}

const SignIn = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });

/** Over TLS, or behind a proxy that says it was: a wrong claim only keeps the cookie from the claimant's own plain-HTTP requests. */
export function isSecure(request: FastifyRequest): boolean {
  return request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https';
}

export function sessionOfRequest(sessions: SessionStore, request: FastifyRequest): Session | undefined {
  return sessions.get(readSessionCookie(request.headers.cookie));
}

/**
 * The console under /console: its page and scripts, the session exchange (an API token
 * for an HttpOnly session cookie and a CSRF token) and the live Overview stream. Every
 * answer carries the console's CSP and headers. The page talks to /v1 with the cookie
 * (http/admin-api.ts accepts it through auth/guard.ts).
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const { tokens, sessions, hub, assets } = options;
  app.addHook('onRequest', async (_request, reply) => {
    reply.headers(CONSOLE_HEADERS);
  });
  // Per signed-in token, else per address: a sign-in cannot be tried faster than this (a token is
  // 256 random bits, but a log full of tries is noise). Keyed on the session when there is one, so
  // a client spending its address's limit (behind the same proxy or NAT) does not lock out users signed in.
  await app.register(rateLimit, {
    max: options.rateLimit,
    timeWindow: 60_000,
    keyGenerator: (request) => {
      const session = sessionOfRequest(sessions, request);
      return session === undefined ? `console:a:${request.ip}` : `console:p:${session.principal.name}`;
    },
    errorResponseBuilder: (_request, context) => Object.assign(new ProblemError('RATE_LIMITED', `more than ${context.max} requests in ${context.after}: slow down`), { statusCode: 429 }),
  });
  app.addHook('preClose', async () => hub.closeAll());

  const page = (reply: FastifyReply) => {
    if (assets === undefined) throw new ProblemError('CONSOLE_NOT_BUILT', 'the console is not built: run `npm run build` (it builds packages/console-ui)');
    return reply.header('cache-control', 'no-store').type(assets.index.type).send(assets.index.body);
  };
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => page(reply));
  app.get<{ Params: { name: string } }>('/console/assets/:name', { schema: { hide: true } }, async (request, reply) => {
    const asset = assets?.files.get(request.params.name);
    if (asset === undefined) throw new ProblemError('NOT_FOUND', `no console asset ${request.params.name}`);
    return reply.header('cache-control', 'no-cache').type(asset.type).send(asset.body);
  });

  const view = (s: Session) => ({ name: s.principal.name, role: s.principal.role, csrf: s.csrf, expiresAt: s.expiresAt });

  app.post<{ Body: Static<typeof SignIn> }>('/console/session', { schema: { hide: true, body: SignIn } }, async (request, reply) => {
    const principal = tokens.identify(request.body.token);
    if (principal === undefined) throw new ProblemError('UNAUTHENTICATED', 'unknown or revoked token');
    // A sign-in ends the session the browser had, if any: one browser, one session.
    sessions.delete(readSessionCookie(request.headers.cookie));
    const { id, session } = sessions.create(principal);
    reply.header('set-cookie', sessionCookie(id, { secure: isSecure(request), maxAgeSeconds: (session.expiresAt - session.createdAt) / 1000 }));
    return reply.header('cache-control', 'no-store').send(view(session));
  });

  app.get('/console/session', { schema: { hide: true } }, async (request, reply) => {
    const session = sessionOfRequest(sessions, request);
    if (session === undefined) throw new ProblemError('UNAUTHENTICATED', 'no console session: sign in with an API token');
    return reply.header('cache-control', 'no-store').send(view(session));
  });

  app.delete('/console/session', { schema: { hide: true } }, async (request, reply) => {
    const id = readSessionCookie(request.headers.cookie);
    const session = sessions.get(id);
    if (session !== undefined) {
      if (!csrfMatches(session.csrf, request.headers[CSRF_HEADER])) throw new ProblemError('CSRF_INVALID', `sign-out needs the session's CSRF token in the ${CSRF_HEADER} header`);
      sessions.delete(id);
    }
    return reply
      .header('set-cookie', clearedSessionCookie(isSecure(request)))
      .code(204)
      .send();
  });

  app.get('/console/events', { schema: { hide: true } }, async (request, reply) => {
    const id = readSessionCookie(request.headers.cookie);
    const session = sessions.get(id);
    if (session === undefined || id === undefined) throw new ProblemError('UNAUTHENTICATED', 'no console session: sign in with an API token');
    // One stream per session, keyed by the session (its CSRF token is as unique and is not the cookie).
    const key = session.csrf;
    if (!hub.hasRoom(key, session.principal.name)) throw new ProblemError('CONSOLE_BUSY', 'too many live overview streams are open; retry in a moment');
    reply.hijack();
    reply.raw.writeHead(200, {
      ...CONSOLE_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // nginx and the like would hold the events back in their buffer.
      'x-accel-buffering': 'no',
    });
    hub.open(key, reply.raw, () => sessions.get(id) !== undefined, session.principal.name);
  });
}
