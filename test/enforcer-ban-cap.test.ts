import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSchemaCatalog, SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { testInfra } from './support/infra.js';
import { produceOrFail } from './support/kafka.js';
import { startPipeline, type Pipeline } from './support/pipeline.js';

/**
 * An enforcer sidecar whose ban cache is capped (ENFORCER_MAX_BANS=2) reads a bans
 * topic holding more: it keeps the first two, refuses the third (counted, logged once),
 * takes the manual ban past the cap, and stays ready throughout.
 */
describe('enforcer: ENFORCER_MAX_BANS', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let pipeline: Pipeline | undefined;

  afterAll(async () => {
    await pipeline?.close();
  });

  it('refuses bans on new subjects past the cap, in the order read, never a manual one, and says so in metrics and the log', async () => {
    // One partition: the order the enforcer reads the bans in is the order they were sent.
    pipeline = await startPipeline(kafkaBrokers, 1);
    const p = pipeline;
    const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);
    const now = Date.now();
    const ban = (address: string, origin: string): Ban => ({
      banId: randomUUID(),
      subject: `ip:${address}`,
      policyId: 'flood',
      reason: 'cap test',
      evidenceCount: 30,
      windowSeconds: 60,
      startedAt: now,
      expiresAt: now + 600_000,
      preview: false,
      escalationLevel: 0,
      origin,
      httpStatus: 403,
      createdBy: origin === 'manual' ? 'tests' : null,
    });
    const sent = [ban('203.0.113.1', 'aggregator'), ban('203.0.113.2', 'aggregator'), ban('203.0.113.3', 'aggregator'), ban('203.0.113.4', 'manual')];
    await produceOrFail(
      p.broker.producer,
      p.broker.topics.name('bans'),
      sent.map((b) => ({ key: b.subject, value: codec.encode(b) })),
    );
    const sidecar = await p.startSidecar({ REDIS_URL: redisUrl, ENFORCER_MAX_BANS: '2', LOG_LEVEL: 'warn' });
    // Ready means the bans topic was read to its end: the answers are final at once.
    const sources = await Promise.all(['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4'].map(async (ip) => (await sidecar.check({ ip })).body.source));
    expect(sources).toEqual(['ban', 'ban', 'none', 'ban']);
    const metrics = await (await fetch(`${sidecar.url}/metrics`)).text();
    expect(metrics).toMatch(/^banstream_enforcer_bans_refused_total\{service="enforcer"\} 1$/m);
    expect(metrics).toMatch(/^banstream_enforcer_bans_max\{service="enforcer"\} 2$/m);
    expect(await sidecar.ready()).toBe(true);
    const lines = sidecar.proc
      .output()
      .split('\n')
      .filter((l) => l.includes('ban cache full'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ held: 2, maxBans: 2, refused: 1, subject: 'ip:203.0.113.3', policyId: 'flood' });
  }, 180_000);
});
