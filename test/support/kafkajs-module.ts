import { kafkajsOwn } from '../../packages/kafka/src/patches/kafkajs-own.js';

/**
 * A second copy of one of kafkajs's modules (and of the modules it loads that `chain`
 * names), loaded past the module cache: the original as kafkajs ships it, for tests
 * comparing a patch (installKafkaPatches) with it even when the replacement is installed.
 */
export function freshKafkajsModule<T>(path: string, chain: readonly string[] = []): T {
  return kafkajsOwn<T>(path, chain);
}
