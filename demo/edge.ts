/**
 * A real edge service: a shop on Fastify behind a proxy (127.0.0.1, which sets
 * X-Forwarded-For and CF-IPCountry), with banstream's plugin checking every request
 * before its handler (library-mode enforcer) and publishing its event after.
 */
import Fastify from 'fastify';
import { createEdgePublisher } from '@banstream/edge';
import { banstreamPlugin, createEnforcer, type Enforcer } from '@banstream/enforcer';
import { createMetricsRegistry, type Logger } from '@banstream/platform';
import { createKafka, parseBrokers, topicFullName } from '@banstream/kafka';
import { GOOD_PASSWORD } from './scenario.js';

export interface EdgeOptions {
  brokers: string;
  topicPrefix: string;
  edgeId: string;
  logger: Logger;
  /** Default: any free port. */
  port?: number;
}

export interface Edge {
  url: string;
  edgeId: string;
  enforcer: Enforcer;
  close(): Promise<void>;
}

export async function startEdge(options: EdgeOptions): Promise<Edge> {
  const { edgeId, logger } = options;
  const kafka = createKafka({ brokers: parseBrokers(options.brokers), clientId: edgeId, logger });
  const admin = kafka.admin();
  await admin.connect();
  const registry = createMetricsRegistry(edgeId, { defaultMetrics: false });
  const enforcer = createEnforcer({ kafka, admin, topicPrefix: options.topicPrefix, logger, registry, instanceId: `${edgeId}-${process.pid}-${Date.now()}` });
  await enforcer.start();
  const publisher = createEdgePublisher({ kafka, topic: topicFullName(options.topicPrefix, 'events'), logger, registry, lingerMs: 5 });
  // Only the local proxy's X-Forwarded-For and CF-IPCountry are believed.
  const app = Fastify({ trustProxy: '127.0.0.1' });
  const country = (r: { headers: Record<string, unknown> }) => (typeof r.headers['cf-ipcountry'] === 'string' ? r.headers['cf-ipcountry'] : undefined);
  await app.register(banstreamPlugin, { enforcer, publisher, edgeId, country, eventHeaders: ['user-agent'] });
  app.get('/', async () => ({ shop: 'banstream demo', edge: edgeId }));
  app.get('/api/products', async () => ({
    products: [
      { id: 1, name: 'kettle' },
      { id: 2, name: 'teapot' },
    ],
  }));
  app.post('/login', async (request, reply) => {
    const body = (request.body ?? {}) as { user?: unknown; password?: unknown };
    if (typeof body.user !== 'string' || body.password !== GOOD_PASSWORD) return reply.code(401).send({ error: 'bad credentials' });
    return { welcome: body.user };
  });
  const url = await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  return {
    url,
    edgeId,
    enforcer,
    async close() {
      await app.close();
      await publisher.close(5_000);
      await enforcer.stop();
      await admin.disconnect();
    },
  };
}
