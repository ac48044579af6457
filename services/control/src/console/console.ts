import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from '@banstream/platform';
import type { SessionAuth } from '../auth/guard.js';
import type { TokenBook } from '../auth/tokens.js';
import type { ControlState } from '../state/control-state.js';
import type { ConsoleAssets } from './assets.js';
import { readSessionCookie } from './cookies.js';
import { CSRF_HEADER, csrfMatches, needsCsrf } from './csrf.js';
import { HotCounts } from './hot-counts.js';
import { MetricsScraper } from './metrics-scrape.js';
import { Overview } from './overview.js';
import { consoleRoutes } from './routes.js';
import { SessionStore } from './sessions.js';
import { StreamHub } from './streams.js';

export interface ConsoleOptions {
  tokens: TokenBook;
  state: ControlState;
  assets: ConsoleAssets | undefined;
  sessionTtlMs: number;
  maxSessions: number;
  maxStreams: number;
  tickMs: number;
  metricsUrls: readonly string[];
  rateLimit: number;
  eventsEndOffset(): Promise<number>;
  clock: () => number;
  logger: Logger;
}

/** Hot counts kept for "nearest their threshold": a fixed cost however many subjects are hot. */
const HOT_COUNTS_KEPT = 50_000;

/** The web console's parts, built once by service.ts: sessions for the API's guard, the Overview's inputs, the routes. */
export function createConsole(options: ConsoleOptions) {
  const { clock, logger } = options;
  const sessions = new SessionStore({ ttlMs: options.sessionTtlMs, max: options.maxSessions }, clock);
  const hot = new HotCounts(HOT_COUNTS_KEPT);
  const scraper = new MetricsScraper(options.metricsUrls, { timeoutMs: Math.max(200, Math.min(2_000, options.tickMs * 2)), maxBytes: 8 * 1024 * 1024 }, clock);
  const overview = new Overview({ state: options.state, hot, scraper, eventsEndOffset: options.eventsEndOffset, clock, logger });
  const hub = new StreamHub({ max: options.maxStreams, tickMs: options.tickMs, snapshot: () => overview.snapshot(), logger });
  const sessionAuth: SessionAuth = {
    sessionOf: (request: FastifyRequest) => sessions.get(readSessionCookie(request.headers.cookie)),
    csrfOk: (request, session) => !needsCsrf(request.method) || csrfMatches(session.csrf, request.headers[CSRF_HEADER]),
  };
  return {
    sessionAuth,
    hot,
    overview,
    /** Registers /console on the service's server (not awaited, as the admin API is not). */
    register(app: FastifyInstance): void {
      void app.register(consoleRoutes, { tokens: options.tokens, sessions, hub, assets: options.assets, rateLimit: options.rateLimit });
    },
    stop(): void {
      hub.closeAll();
    },
  };
}
export type Console = ReturnType<typeof createConsole>;
