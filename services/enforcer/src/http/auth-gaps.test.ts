import { describe, expect, it } from 'vitest';
import type { Admin, Kafka } from '@banstream/kafka';
import { createLogger, createMetricsRegistry, type Logger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { BanCache } from '../cache/ban-cache.js';
import { scopeBit, scopesIn, type ContextScope } from '../context-scopes.js';
import { createEnforcer, type ContextNeed } from '../enforcer.js';
import { AuthGaps } from './auth-gaps.js';

const catalog = loadSchemaCatalog();
const NOW = Date.now();

const ban = (subject: string, expiresAt = NOW + 3_600_000, policyId = 'manual'): Ban => ({
  banId: subject,
  subject,
  policyId,
  reason: 'r',
  evidenceCount: 0,
  windowSeconds: 0,
  startedAt: NOW,
  expiresAt,
  preview: false,
  escalationLevel: 0,
  origin: 'manual',
  httpStatus: 403,
  createdBy: 'ops',
});

/** A logger that keeps its warnings. */
function recording(): { logger: Logger; warnings: Record<string, unknown>[] } {
  const warnings: Record<string, unknown>[] = [];
  const logger = { warn: (fields: Record<string, unknown>, message: string) => warnings.push({ ...fields, message }) } as unknown as Logger;
  return { logger, warnings };
}

/** The gauge's samples, as `scope/kind` → value. */
async function gaugeOf(registry: ReturnType<typeof createMetricsRegistry>): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('banstream_enforcer_auth_unenforceable')!.get();
  return Object.fromEntries(metric.values.map((v) => [`${String(v.labels.scope)}/${String(v.labels.kind)}`, v.value]));
}

/** A Kafka whose compacted topics hold `records` per topic name suffix, read once; only what CompactedFeed calls (its crash listener never fires). */
function loadedKafka(records: Record<string, { key: string; value: Buffer }[]>): { kafka: Kafka; admin: Admin } {
  const of = (topic: string) => records[Object.keys(records).find((suffix) => topic.includes(suffix)) ?? ''] ?? [];
  const admin = {
    fetchTopicOffsets: async (topic: string) => [{ partition: 0, low: '0', high: String(of(topic).length), offset: '0' }],
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
          const messages = of(topic).map((r, i) => ({ key: Buffer.from(r.key), value: r.value, offset: String(i), timestamp: String(NOW) }));
          if (messages.length > 0) await eachBatch({ batch: { partition: 0, messages, lastOffset: () => String(messages.length - 1) } });
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, admin };
}

describe('AuthGaps', () => {
  it('logs the first ban and the first policy naming each scope GET /v1/auth is not given, once', () => {
    const { logger, warnings } = recording();
    const gaps = new AuthGaps(new Set<ContextScope>(['country']), logger, createMetricsRegistry('t', { defaultMetrics: false }));
    const need = (kind: ContextNeed['kind'], ...scopes: ContextScope[]) => gaps.need({ kind, policyId: 'p', scopes: scopes.reduce((s, x) => s | scopeBit(x), 0) });
    need('ban', 'country', 'asn');
    need('ban', 'asn');
    need('ban', 'route');
    need('policy', 'asn', 'country');
    need('policy', 'asn');
    expect(warnings.map((w) => [w.kind, w.scope])).toEqual([
      ['ban', 'asn'],
      ['ban', 'route'],
      ['policy', 'asn'],
    ]);
    expect(String(warnings[0]!.message)).toContain('ENFORCER_ASN_HEADER is none');
  });

  it('counts by scope and kind what GET /v1/auth cannot apply, and nothing for a scope it is given', async () => {
    const registry = createMetricsRegistry('t', { defaultMetrics: false });
    const gaps = new AuthGaps(new Set<ContextScope>(['route']), recording().logger, registry);
    gaps.refresh({ country: { bans: 3, policies: 1 }, region: { bans: 0, policies: 0 }, asn: { bans: 2, policies: 0 }, route: { bans: 5, policies: 2 } });
    expect(await gaugeOf(registry)).toEqual({
      'country/ban': 3,
      'country/policy': 1,
      'region/ban': 0,
      'region/policy': 0,
      'asn/ban': 2,
      'asn/policy': 0,
      'route/ban': 0,
      'route/policy': 0,
    });
  });
});

describe('the bans and policies that name a context scope', () => {
  it('BanCache counts live bans per scope through sets, replacements, tombstones and purges, and reports each that comes', () => {
    const came: string[] = [];
    const cache = new BanCache({ onContextBan: (scopes, b) => came.push(`${b.subject}:${scopesIn(scopes).join('+')}`) });
    cache.observe('country:AU', ban('country:AU'));
    cache.observe('country:AU', ban('country:AU'));
    cache.observe('asn:7|country:FR', ban('asn:7|country:FR', NOW + 10));
    cache.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    cache.observe('user:country:AU', ban('user:country:AU'));
    expect([cache.bansNaming('country'), cache.bansNaming('asn'), cache.bansNaming('route')]).toEqual([2, 1, 0]);
    expect(came).toEqual(['country:AU:country', 'country:AU:country', 'asn:7|country:FR:country+asn']);
    cache.purgeExpired(NOW + 20);
    cache.observe('country:AU', null);
    cache.observe('country:NZ', null);
    expect([cache.bansNaming('country'), cache.bansNaming('asn')]).toEqual([0, 0]);
  });

  it('the enforcer reports them as its feeds load them, and tells how many it holds', async () => {
    const policy = (id: string, spec: Record<string, unknown>) => ({
      key: id,
      value: catalog
        .codec(SCHEMA_NAMES.policy)
        .encode({ id, version: 1, description: 'd', owner: 'o', mode: 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 't', updatedAt: 0 }),
    });
    const base = { threshold: { count: 5, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } };
    const banRecord = (subject: string, policyId: string) => ({ key: subject, value: catalog.codec(SCHEMA_NAMES.ban).encode(ban(subject, NOW + 3_600_000, policyId)) });
    const { kafka, admin } = loadedKafka({
      policies: [policy('geo', { ...base, key: ['ip'], match: { countries: ['AU'] } }), policy('per-route', { ...base, key: ['ip', 'route'] }), policy('plain', { ...base, key: ['ip'] })],
      bans: [banRecord('country:AU', 'manual'), banRecord('ip:192.0.2.1|route:/login', 'per-route'), banRecord('ip:192.0.2.2', 'plain')],
    });
    const { logger, warnings } = recording();
    const registry = createMetricsRegistry('t', { defaultMetrics: false });
    const gaps = new AuthGaps(new Set(), logger, registry);
    const enforcer = createEnforcer({
      kafka,
      admin,
      topicPrefix: 't.',
      logger: createLogger({ level: 'silent', service: 't' }),
      registry,
      instanceId: 'gaps',
      onContextNeed: (n) => gaps.need(n),
    });
    await enforcer.start();
    expect(enforcer.contextNeeds()).toEqual({
      country: { bans: 1, policies: 1 },
      region: { bans: 0, policies: 0 },
      asn: { bans: 0, policies: 0 },
      route: { bans: 1, policies: 1 },
    });
    expect(warnings.map((w) => `${String(w.kind)} ${String(w.scope)} ${String(w.policy)}`).sort()).toEqual([
      'ban country manual',
      'ban route per-route',
      'policy country geo',
      'policy route per-route',
    ]);
    gaps.refresh(enforcer.contextNeeds());
    expect(await gaugeOf(registry)).toMatchObject({ 'country/ban': 1, 'country/policy': 1, 'route/ban': 1, 'route/policy': 1, 'asn/ban': 0 });
    await enforcer.stop();
  });
});
