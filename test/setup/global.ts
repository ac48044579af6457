import type { TestProject } from 'vitest/node';
import { resolveInfrastructure, type Infrastructure } from './infrastructure.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string;
    redisUrl: string;
    infrastructure: string;
  }
}

/**
 * Once per test run: find or start a real Kafka broker and a real Redis, hand their
 * addresses to every test file, and stop what this run started when it ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const infra: Infrastructure = await resolveInfrastructure(process.env, (line) => console.log(`[test-infra] ${line}`));
  console.log(`[test-infra] using ${infra.source}: KAFKA_BROKERS=${infra.kafkaBrokers} REDIS_URL=${infra.redisUrl}`);
  project.provide('kafkaBrokers', infra.kafkaBrokers);
  project.provide('redisUrl', infra.redisUrl);
  project.provide('infrastructure', infra.source);
  return async () => {
    await infra.stop();
  };
}
