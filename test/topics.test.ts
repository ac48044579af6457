import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTopics, topicSpecs, type Admin } from '@banstream/kafka';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { testKafka } from './support/kafka.js';

describe('topics created by code', () => {
  let admin: Admin;
  const prefix = `${uniqueName('t')}.`;
  const specs = topicSpecs({ prefix, partitions: 2, replicationFactor: 1 });

  beforeAll(async () => {
    admin = testKafka(testInfra().kafkaBrokers, captureLogger().logger).admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin.deleteTopics({ topics: specs.map((s) => s.name) }).catch(() => undefined);
    await admin.disconnect();
  });

  async function configOf(topic: string, name: string): Promise<string | undefined> {
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic }] });
    return described.resources[0]?.configEntries.find((e) => e.configName === name)?.configValue;
  }

  it('creates every topic of the design with its cleanup policy, idempotently', async () => {
    const first = await ensureTopics(admin, specs);
    expect(first.created.sort()).toEqual(specs.map((s) => s.name).sort());

    for (const topic of ['bans', 'counts', 'policies', 'allowlist']) {
      expect(await configOf(`${prefix}${topic}.v1`, 'cleanup.policy')).toBe('compact');
    }
    for (const topic of ['events', 'alerts', 'audit', 'dlq']) {
      expect(await configOf(`${prefix}${topic}.v1`, 'cleanup.policy')).toBe('delete');
    }
    expect(Number(await configOf(`${prefix}events.v1`, 'retention.ms'))).toBeGreaterThanOrEqual(24 * 3_600_000);
    const metadata = await admin.fetchTopicMetadata({ topics: [`${prefix}events.v1`] });
    expect(metadata.topics[0]?.partitions).toHaveLength(2);

    const second = await ensureTopics(admin, specs);
    expect(second.created).toEqual([]);
    expect(second.existing.sort()).toEqual(specs.map((s) => s.name).sort());
    expect(second.reconfigured).toEqual([]);
  });

  it('brings a drifted topic configuration back in line', async () => {
    const bans = `${prefix}bans.v1`;
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: bans, configEntries: [{ name: 'cleanup.policy', value: 'delete' }] }] });
    // KRaft applies a config change through its metadata log, so a broker may answer with the
    // old value for a moment after alterConfigs returns (CI once read 'compact' here).
    await waitUntil(async () => (await configOf(bans, 'cleanup.policy')) === 'delete', 'the drift to be visible');
    const result = await ensureTopics(admin, specs);
    expect(result.reconfigured).toEqual([bans]);
    await waitUntil(async () => (await configOf(bans, 'cleanup.policy')) === 'compact', 'cleanup.policy back to compact');
  });
});
