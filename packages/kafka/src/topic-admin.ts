import type { Admin } from 'kafkajs';
import { BanstreamError } from '@banstream/core';
import type { TopicSpec } from './topics.js';
import { retriableKafkaError } from './retriable.js';

export interface EnsureTopicsResult {
  created: string[];
  existing: string[];
  /** Existing topics whose configuration differed and was brought in line. */
  reconfigured: string[];
}

/**
 * Creates missing topics and aligns the configuration of existing ones. Safe to run
 * from every instance at once: a topic created by a concurrent caller counts as existing.
 */
export async function ensureTopics(admin: Admin, specs: readonly TopicSpec[]): Promise<EnsureTopicsResult> {
  const result: EnsureTopicsResult = { created: [], existing: [], reconfigured: [] };
  try {
    const present = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !present.has(s.name));
    if (missing.length > 0) {
      await admin.createTopics({
        // Waited for below, with a longer bound than kafkajs's own retries give a busy broker.
        waitForLeaders: false,
        topics: missing.map((s) => ({
          topic: s.name,
          numPartitions: s.numPartitions,
          replicationFactor: s.replicationFactor,
          configEntries: Object.entries(s.configs).map(([name, value]) => ({ name, value })),
        })),
      });
      result.created.push(...missing.map((s) => s.name));
      await waitForTopicLeaders(
        admin,
        missing.map((s) => s.name),
      );
    }
    for (const spec of specs.filter((s) => present.has(s.name))) {
      result.existing.push(spec.name);
      if (await alignConfig(admin, spec)) result.reconfigured.push(spec.name);
    }
    return result;
  } catch (cause) {
    throw new BanstreamError('KAFKA_UNAVAILABLE', `could not ensure topics: ${(cause as Error).message}`, { cause, retryable: true });
  }
}

const LEADER_WAIT_MS = 30_000;

/**
 * Polls metadata until every partition of `topics` has a leader. Use it in place of kafkajs's
 * `createTopics({ waitForLeaders: true })`, which retries only LEADER_NOT_AVAILABLE: on a cluster
 * of several nodes the broker asked may not know a topic just created yet and answers
 * UNKNOWN_TOPIC_OR_PARTITION, which kafkajs gives up on at once. Here every retriable error is retried.
 */
export async function waitForTopicLeaders(admin: Admin, topics: string[], timeoutMs = LEADER_WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const metadata = await admin.fetchTopicMetadata({ topics });
      const led = metadata.topics.length === topics.length && metadata.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
      if (led) return;
    } catch (error) {
      if (!retriableKafkaError(error) || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`topics still without a leader after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function alignConfig(admin: Admin, spec: TopicSpec): Promise<boolean> {
  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2 /* TOPIC */, name: spec.name }] });
  const current = new Map((described.resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]));
  const differs = Object.entries(spec.configs).some(([name, value]) => current.get(name) !== value);
  if (!differs) return false;
  // alterConfigs replaces the topic's whole override set: send every wanted entry.
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: 2, name: spec.name, configEntries: Object.entries(spec.configs).map(([name, value]) => ({ name, value })) }],
  });
  return true;
}
