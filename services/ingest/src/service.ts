import { createEdgePublisher } from '@banstream/edge';
import { ensureTopicsFromConfig, kafkaFromConfig, kafkaReachable, topicFullName } from '@banstream/kafka';
import type { Service, ServiceDeps } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { ingestEnv, type IngestConfig } from './config.js';
import { EVENT_RULES } from './events/event-rules.js';
import { EventValidator } from './events/validate.js';
import { openGeoDatabase, type GeoDatabase } from './geo/mmdb.js';
import { edgeTokensFromConfig } from './http/edge-auth.js';
import { eventsRoute } from './http/events-route.js';
import { ingestMetrics } from './metrics.js';

export { ingestEnv, type IngestConfig };

/** Room the buffer keeps before /readyz reports the gateway as not ready. */
const READY_BELOW_FILL = 0.9;

/**
 * The ingest gateway: POST /v1/events validates, normalises and enriches events and
 * hands them to an edge publisher, the same library Node edges embed. Events are
 * accepted only when the publisher has room for all of them (else 503).
 */
export function createIngestService(deps: ServiceDeps<IngestConfig>): Service {
  const { config, logger, readiness, registry, http } = deps;
  // First: a gateway without tokens must have been asked for (exit 78 otherwise).
  const tokens = edgeTokensFromConfig(config);
  if (tokens === undefined) logger.warn('INGEST_ALLOW_ANONYMOUS_EDGES=true and no INGEST_EDGE_TOKENS: events are accepted from anyone who can reach the gateway');
  const kafka = kafkaFromConfig(config, logger, 'banstream-ingest');
  const admin = kafka.admin();
  const catalog = loadSchemaCatalog();
  const publisher = createEdgePublisher({
    kafka,
    topic: topicFullName(config.TOPIC_PREFIX, 'events'),
    logger,
    registry,
    catalog,
    budgetBytes: config.INGEST_BUFFER_BYTES,
    lingerMs: config.INGEST_LINGER_MS,
  });
  let geo: GeoDatabase | undefined;
  let state: 'starting' | 'started' | 'stopping' = 'starting';
  readiness.add('started', () => state === 'started');
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));
  readiness.add('buffer', () => publisher.fill() < READY_BELOW_FILL);

  void http.register(eventsRoute, {
    publisher,
    metrics: ingestMetrics(registry),
    tokens,
    validator: new EventValidator(catalog.latest(SCHEMA_NAMES.requestEvent).schema, EVENT_RULES),
    batchCodec: catalog.codec(SCHEMA_NAMES.requestEventBatch),
    eventType: catalog.latest(SCHEMA_NAMES.requestEvent).type,
    geo: () => geo,
    bodyLimit: config.INGEST_BODY_LIMIT_BYTES,
    maxFutureMs: config.INGEST_MAX_FUTURE_MS,
    retryAfterSeconds: config.INGEST_RETRY_AFTER_SECONDS,
    unavailable: () => (state === 'started' ? undefined : state === 'starting' ? 'the gateway is starting' : 'the gateway is shutting down'),
  });

  return {
    async start() {
      if (config.INGEST_GEOIP_DB !== undefined) {
        geo = await openGeoDatabase(config.INGEST_GEOIP_DB);
        logger.info(geo.description, 'geography database opened');
      } else logger.warn('INGEST_GEOIP_DB is not set: events keep the geography they come with');
      await admin.connect();
      const topics = await ensureTopicsFromConfig(admin, config);
      if (topics) logger.info({ created: topics.created }, 'topics ensured');
      state = 'started';
    },
    async stop() {
      state = 'stopping';
      // Leave a second of the shutdown budget for the HTTP server and the admin client.
      const stats = await publisher.close(Math.max(100, config.SHUTDOWN_TIMEOUT_MS - 1_000));
      logger.info({ published: stats.published, delivered: stats.delivered, dropped: stats.dropped }, 'publisher closed');
      await admin.disconnect();
    },
  };
}
