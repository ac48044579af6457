import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '@banstream/core';
import { sendProblem } from '@banstream/platform';
import type { EdgePublisher } from '@banstream/edge';
import type { Codec, RequestEventBatch, SchemaVersion } from '@banstream/schemas';
import type { GeoLookup, GeoOutcome } from '../geo/enrich.js';
import { prepareAvro, prepareJson } from '../events/prepare.js';
import type { EventValidator } from '../events/validate.js';
import type { IngestMetrics } from '../metrics.js';
import type { EdgeTokens } from './edge-auth.js';
import { fromFastifyError, UNSUPPORTED_MEDIA_TYPE } from './errors.js';

export interface EventsRouteOptions {
  publisher: Pick<EdgePublisher, 'offer'>;
  validator: EventValidator;
  batchCodec: Codec<RequestEventBatch>;
  eventType: SchemaVersion['type'];
  /** Undefined while there is no database (none configured, or not opened yet). */
  geo: () => GeoLookup | undefined;
  tokens: EdgeTokens | undefined;
  bodyLimit: number;
  /** How far ahead of the gateway's clock an event may be dated (INGEST_MAX_FUTURE_MS). */
  maxFutureMs: number;
  /** The clock event times are weighed against; the system's unless a test fixes it. */
  clock?: Clock;
  retryAfterSeconds: number;
  /** Why events are not taken now (starting, shutting down), or undefined when they are. */
  unavailable: () => string | undefined;
  metrics: IngestMetrics;
}

type Format = 'json' | 'avro';
const AVRO = 'application/avro';

/**
 * POST /v1/events: a JSON array of RequestEvent, or one Avro RequestEventBatch.
 * 202 once every event is in the publisher's buffer (then delivered, or counted if
 * ever dropped); 400 naming each invalid event and nothing accepted; 401, 413, 415;
 * 503 with Retry-After when the buffer has no room, so edges back off instead of
 * events being lost. GET /v1/events/schema serves the JSON Schema the array must match.
 */
export async function eventsRoute(app: FastifyInstance, options: EventsRouteOptions): Promise<void> {
  const { publisher, validator, batchCodec, eventType, tokens, bodyLimit, maxFutureMs, metrics } = options;
  const clock = options.clock ?? systemClock;
  const retryAfter = String(options.retryAfterSeconds);

  // Bodies stay raw buffers: decoding is the handler's, with the gateway's messages.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', AVRO], { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));

  app.setErrorHandler((error: { code?: string; statusCode?: number; message: string }, _req, reply) => {
    const mapped = fromFastifyError(error, bodyLimit);
    if (mapped.code === 'INTERNAL') app.log.error({ err: error }, 'ingest request failed');
    return sendProblem(reply, mapped.code, mapped.message);
  });

  app.addHook('onRequest', async (request, reply) => {
    const reason = options.unavailable();
    if (reason !== undefined) return sendProblem(reply.header('retry-after', retryAfter), 'UNAVAILABLE', reason);
    if (tokens !== undefined && !tokens.allows(request.headers.authorization)) {
      return sendProblem(reply.header('www-authenticate', 'Bearer realm="banstream-ingest"'), 'UNAUTHORIZED', 'a valid edge token is required: Authorization: Bearer <token>');
    }
    return undefined;
  });

  app.addHook('onResponse', async (request, reply) => {
    if (request.method === 'POST') metrics.requests.inc({ status: String(reply.statusCode), format: formatOf(request) });
  });

  app.get('/v1/events/schema', async () => validator.schema);

  app.post('/v1/events', { bodyLimit }, async (request: FastifyRequest, reply: FastifyReply) => {
    if (!Buffer.isBuffer(request.body)) return sendProblem(reply, 'UNSUPPORTED_MEDIA_TYPE', UNSUPPORTED_MEDIA_TYPE);
    const format = formatOf(request);
    const preparation = { validator, batchCodec, eventType, geo: options.geo(), time: { nowMs: clock.now(), maxFutureMs } };
    const prepared = format === 'avro' ? prepareAvro(request.body, preparation) : prepareJson(request.body, preparation);
    if (!prepared.ok) {
      // A batch refused for invalid events counts whole: none of it was accepted.
      if (prepared.received !== undefined) metrics.events.inc({ format, outcome: 'invalid' }, prepared.received);
      const extensions = prepared.problems ? { errors: prepared.problems, ...(prepared.truncated ? { truncated: true } : {}) } : undefined;
      return sendProblem(reply, prepared.code, prepared.message, extensions);
    }
    const { events, geo } = prepared;
    for (const result of Object.keys(geo) as GeoOutcome[]) if (geo[result] > 0) metrics.geo.inc({ result }, geo[result]);
    if (!publisher.offer(events)) {
      metrics.events.inc({ format, outcome: 'refused' }, events.length);
      return sendProblem(
        reply.header('retry-after', retryAfter),
        'BUFFER_FULL',
        `the gateway's buffer is full (Kafka slow or unreachable); nothing of this batch was accepted: retry after ${retryAfter} s`,
      );
    }
    metrics.events.inc({ format, outcome: 'accepted' }, events.length);
    return reply.code(202).send({ accepted: events.length });
  });
}

function formatOf(request: FastifyRequest): Format {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith(AVRO) ? 'avro' : 'json';
}
