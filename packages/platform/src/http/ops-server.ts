import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { MAX_SUBJECT_TEXT_LENGTH } from '@banstream/core';
import type { Logger } from '../logging/logger.js';
import type { Readiness } from '../lifecycle/readiness.js';
import { notFoundProblem, problemErrorHandler } from './problem.js';

/** What /metrics serves: a registry, or the sum of several (a supervisor's workers). */
export type MetricsSource = Pick<Registry, 'contentType' | 'metrics'>;

export interface OpsRoutesOptions {
  registry: MetricsSource;
  readiness: Readiness;
}

/**
 * /livez (the process answers), /readyz (every readiness check passes) and /metrics.
 * Registered as a plugin so a service can add its own routes on the same server.
 */
export async function opsRoutes(app: FastifyInstance, options: OpsRoutesOptions): Promise<void> {
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const report = await options.readiness.report();
    return reply.code(report.ready ? 200 : 503).send({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks });
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.header('content-type', options.registry.contentType).send(await options.registry.metrics());
  });
}

export function createHttpServer(logger: Logger): FastifyInstance {
  // Requests are not logged one by one: on a hot path that is a cost and a flood. For the
  // same reason a request gets the server's logger rather than a child of its own (a pino
  // child with redaction per request, a few µs); Fastify's error lines name the request.
  const app = Fastify({
    loggerInstance: logger.child({ component: 'http' }) as FastifyBaseLogger,
    forceCloseConnections: 'idle',
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (serverLogger) => serverLogger,
    // Unknown fields are refused with a 400 naming them, never silently dropped.
    ajv: { customOptions: { removeAdditional: false, allErrors: true } },
    // A subject in a path (DELETE /v1/bans/:subject) may be longer than the router's 100
    // characters, which it answers with a bare 414: each route's schema bounds its params.
    routerOptions: { maxParamLength: MAX_SUBJECT_TEXT_LENGTH },
  });
  // Every error answer of every service is problem+json, unless a plugin words its own (still through sendProblem).
  app.setErrorHandler(problemErrorHandler(logger));
  app.setNotFoundHandler(notFoundProblem);
  return app;
}
