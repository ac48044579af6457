/**
 * Ban feed lag: from a ban being sent to the bans topic to an enforcer (the library,
 * in this process, tailing the topic as every enforcer does) denying the banned
 * address. Measured per ban by polling check() every millisecond.
 */
import { topicFullName, type Kafka } from '@banstream/kafka';
import { createLogger, createMetricsRegistry } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { createEnforcer } from '../../services/enforcer/dist/index.js';
import { median, note, percentile } from '../lib.js';
import { manualBan } from '../../test/support/bans.js';

const BANS = 100;
const GAP_MS = 50;

export interface FeedFigures {
  ban_feed_lag_p50_ms: number;
  ban_feed_lag_p99_ms: number;
}

export async function measureFeedLag(kafka: Kafka, prefix: string): Promise<FeedFigures> {
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  const logger = createLogger({ service: 'bench', level: 'warn' });
  const enforcer = createEnforcer({ kafka, admin, topicPrefix: prefix, logger, registry: createMetricsRegistry('bench', { defaultMetrics: false }), instanceId: `bench-${process.pid}` });
  const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);
  const lags: number[] = [];
  try {
    await enforcer.start();
    note(`feed lag: ${BANS} bans, ${GAP_MS} ms apart`);
    for (let i = 0; i < BANS; i++) {
      const ip = `198.18.${i >> 8}.${i & 255}`;
      const value = codec.encode(manualBan(`ip:${ip}`, { banId: `lag-${i}`, reason: 'bench', createdBy: 'bench' }));
      const sent = performance.now();
      await producer.send({ topic: topicFullName(prefix, 'bans'), acks: -1, messages: [{ key: `ip:${ip}`, value }] });
      while ((await enforcer.check({ ip, method: 'GET', host: 'h', path: '/' })).allowed) {
        if (performance.now() - sent > 10_000) throw new Error(`ban ${i} not applied within 10 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      lags.push(performance.now() - sent);
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
  } finally {
    await enforcer.stop();
    await producer.disconnect();
    await admin.disconnect();
  }
  return { ban_feed_lag_p50_ms: Number(median(lags).toFixed(2)), ban_feed_lag_p99_ms: Number(percentile(lags, 99).toFixed(2)) };
}
