import type { Admin } from 'kafkajs';
import { BanstreamError } from '@banstream/core';
import type { TopicSpec } from './topics.js';

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
        waitForLeaders: true,
        topics: missing.map((s) => ({
          topic: s.name,
          numPartitions: s.numPartitions,
          replicationFactor: s.replicationFactor,
          configEntries: Object.entries(s.configs).map(([name, value]) => ({ name, value })),
        })),
      });
      result.created.push(...missing.map((s) => s.name));
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
