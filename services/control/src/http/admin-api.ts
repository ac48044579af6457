import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { ProblemError, type Logger } from '@banstream/platform';
import { guard, rateLimitKey, type SessionAuth } from '../auth/guard.js';
import type { TokenBook } from '../auth/tokens.js';
import type { BacktestJobs } from '../backtest/jobs.js';
import type { FeedRefresher } from '../feeds/refresher.js';
import type { GuardRails } from '../guards/index.js';
import { allowRoutes } from '../routes/allowlist.js';
import { alertRoutes } from '../routes/alerts.js';
import { auditRoutes, type AuditRoutesOptions } from '../routes/audit.js';
import { historyRoutes, type HistoryRoutesOptions } from '../routes/history.js';
import { backtestRoutes } from '../routes/backtests.js';
import { banRoutes } from '../routes/bans.js';
import { feedRoutes } from '../routes/feeds.js';
import { policyRoutes } from '../routes/policies.js';
import type { ChangeWriter } from '../state/change-writer.js';
import type { ControlState } from '../state/control-state.js';
import { errorHandler } from './problem.js';
import { Problem } from './schemas.js';

export interface AdminApiOptions extends Omit<HistoryRoutesOptions, 'topics'>, Omit<AuditRoutesOptions, 'topics'> {
  /** The topics history and audit queries read. */
  topics: HistoryRoutesOptions['topics'] & AuditRoutesOptions['topics'];
  tokens: TokenBook;
  state: ControlState;
  writer: ChangeWriter;
  jobs: BacktestJobs;
  logger: Logger;
  clock: () => number;
  /** Requests per minute per client (authenticated principal, else address). */
  rateLimit: number;
  /** Limits on manual bans and allowlist entries. */
  guards: GuardRails;
  /** Refreshes and removes blocklist feeds. */
  feeds: FeedRefresher;
  /** CONTROL_FEED_FILE_DIR. */
  feedFileDir: string | undefined;
  /** Answers 503 while false (the topics are not read to the end yet). */
  ready: () => boolean;
  /** Told of each request refused with 401, 403 or 429. */
  onDenied?(status: number): void;
  /** The console's sessions: with them, a session cookie (and its CSRF token on writes) stands for the token that opened it. */
  sessions?: SessionAuth;
}

/**
 * The admin API under /v1, with its OpenAPI document at /openapi.json. The caller is
 * identified first, limited per principal (or address), then authorised (guard), then routed.
 * Registered as an encapsulated plugin, so the ops routes (/livez, /readyz,
 * /metrics) stay outside its limits and tokens.
 */
export async function adminApi(app: FastifyInstance, options: AdminApiOptions): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'banstream control API', version: '1', description: 'Policies, bans, allowlist, blocklist feeds, alerts and backtests. Every change is audited.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API token; roles viewer, operator, admin' } } },
      security: [{ bearer: [] }],
    },
  });
  app.addSchema(Problem);
  app.setErrorHandler(errorHandler(options.logger));
  // Answers name attackers' and users' addresses: no browser or proxy keeps a copy (set first, so refusals carry it too).
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
  });
  // The guard authenticates in onRequest before the limiter's own onRequest hook runs.
  guard(app, options.tokens, options.sessions);
  await app.register(rateLimit, {
    max: options.rateLimit,
    timeWindow: 60_000,
    keyGenerator: rateLimitKey,
    errorResponseBuilder: (_request, context) => Object.assign(new ProblemError('RATE_LIMITED', `more than ${context.max} requests in ${context.after}: slow down`), { statusCode: 429 }),
  });
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.permission !== undefined && !options.ready()) {
      throw new ProblemError('KAFKA_UNAVAILABLE', 'still reading the topics; retry in a moment');
    }
  });
  await app.register(policyRoutes, options);
  await app.register(banRoutes, options);
  await app.register(allowRoutes, options);
  await app.register(alertRoutes, options);
  await app.register(feedRoutes, options);
  await app.register(historyRoutes, options);
  await app.register(auditRoutes, options);
  await app.register(backtestRoutes, options);
  app.addHook('onResponse', async (_request, reply) => {
    if (reply.statusCode === 401 || reply.statusCode === 403 || reply.statusCode === 429) options.onDenied?.(reply.statusCode);
  });
  // An unknown route is answered by the server's own 404 problem (platform's createHttpServer).
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
