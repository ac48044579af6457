import { describe, expect, it } from 'vitest';
import type { Admin, Kafka } from '@banstream/kafka';
import { createLogger, createMetricsRegistry } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { createEnforcer } from './enforcer.js';

const catalog = loadSchemaCatalog();
const PREFIX = 't.';

/** Failed logins: counted on 401 responses only, a ban that then applies whatever the status. */
const failedLogins = {
  key: ['ip'],
  match: { paths: ['/login'], statuses: [401] },
  threshold: { count: 5, interval: '1m' },
  action: { type: 'ban', banDuration: '1h' },
  enforcement: { type: 'async', failureMode: 'closed' },
  mode: 'enforce',
};

/**
 * A Kafka whose policies topic holds `policies` and whose bans topic never finishes
 * loading (one record it never delivers): an enforcer that has read its policies and
 * is still warming. Only what CompactedFeed calls.
 */
function warmingKafka(policies: Record<string, Record<string, unknown>>): { kafka: Kafka; admin: Admin } {
  const records = Object.entries(policies).map(([id, spec], i) => ({
    key: Buffer.from(id),
    offset: String(i),
    timestamp: String(Date.now()),
    value: catalog.codec(SCHEMA_NAMES.policy).encode({
      id,
      version: 1,
      description: 'd',
      owner: 'o',
      mode: 'enforce',
      enabled: true,
      definition: JSON.stringify(spec),
      updatedBy: 't',
      updatedAt: 0,
    }),
  }));
  const admin = {
    fetchTopicOffsets: async (topic: string) => [{ partition: 0, low: '0', high: topic.includes('policies') ? String(records.length) : topic.includes('bans') ? '1' : '0', offset: '0' }],
    deleteGroups: async () => [],
  } as unknown as Admin;
  const kafka = {
    consumer: () => {
      let topic = '';
      return {
        events: { CRASH: 'consumer.crash' },
        on: () => () => undefined,
        connect: async () => undefined,
        disconnect: async () => undefined,
        stop: async () => undefined,
        commitOffsets: async () => undefined,
        subscribe: async (s: { topic: string }) => void (topic = s.topic),
        run: async ({ eachBatch }: { eachBatch: (p: unknown) => Promise<void> }) => {
          if (!topic.includes('policies')) return;
          await eachBatch({ batch: { partition: 0, messages: records, lastOffset: () => String(records.length - 1) } });
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, admin };
}

/**
 * Attack review of issue 25 (failing test for the lead): while warming, the enforcer
 * picks the policies whose failure modes decide with PolicyBook.applicable (the
 * aggregator's question, status conditions included) instead of applicableAtCheck. At
 * check time there is no status, so a status-matched policy (failed logins) is never
 * decided by its failure mode: with ENFORCER_WARMUP_MODE open, its `closed` is ignored
 * and a brute-forcer whose ban is not read yet passes.
 */
describe('attack: failure modes of status-matched policies while warming', () => {
  const warming = (policies: Record<string, Record<string, unknown>>) => {
    const { kafka, admin } = warmingKafka(policies);
    const enforcer = createEnforcer({
      kafka,
      admin,
      topicPrefix: PREFIX,
      logger: createLogger({ level: 'silent', service: 'test' }),
      registry: createMetricsRegistry('test', { defaultMetrics: false }),
      instanceId: 'warm',
      warmUpMode: 'open',
      warmUpWaitMs: 2_000,
    });
    void enforcer.start();
    return enforcer;
  };

  it('(the harness) a policy without status conditions, failureMode closed, refuses while warming', async () => {
    const enforcer = warming({ 'login-rate': { ...failedLogins, match: { paths: ['/login'] } } });
    const decision = await enforcer.check({ ip: '192.0.2.7', method: 'POST', host: 'shop.example', path: '/login' });
    expect(enforcer.ready).toBe(false);
    expect(decision).toMatchObject({ allowed: false, source: 'warming', policyId: 'login-rate' });
  });

  it('a status-matched policy with failureMode closed refuses /login until the bans are read', async () => {
    const enforcer = warming({ 'failed-logins': failedLogins });
    const decision = await enforcer.check({ ip: '192.0.2.7', method: 'POST', host: 'shop.example', path: '/login' });
    expect(enforcer.ready).toBe(false);
    expect(decision).toMatchObject({ allowed: false, source: 'warming', policyId: 'failed-logins' });
  });
});
