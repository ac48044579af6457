import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 sorts a send's records by partition with a reduce that copies each
 * partition's array for every record it adds (`[...current, message]`), which is
 * quadratic: about 2.5% of the ingest gateway's time, whose sends carry a couple of
 * hundred records. `groupMessagesPerPartition` below gives the same result in one pass.
 *
 * kafkajs takes that function when it is first loaded (producer/sendMessages.js
 * requires it at the top), so the replacement must be in its module cache before:
 * installKafkaPatches() (install.ts) puts it there, and the port loads kafkajs only
 * when a client is first made (kafkajs.ts). When kafkajs was loaded earlier, kafkajs's
 * own stays (no harm, just the cost); `kafkajsGroupingFixed()` says which.
 */

interface GroupArgs {
  topic: string;
  partitionMetadata: readonly unknown[];
  messages: readonly unknown[];
  partitioner: (args: { topic: string; partitionMetadata: readonly unknown[]; message: unknown }) => number;
}

const require = createRequire(import.meta.url);
export const GROUPING_MODULE = 'kafkajs/src/producer/groupMessagesPerPartition.js';
const SEND_MESSAGES_MODULE = 'kafkajs/src/producer/sendMessages.js';

/** kafkajs's result: partition → its messages in send order; nothing when the topic has no partitions known. */
export function groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner }: GroupArgs): Record<number, unknown[]> {
  const result: Record<number, unknown[]> = {};
  if (partitionMetadata.length === 0) return result;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    const current = result[partition];
    if (current === undefined) result[partition] = [message];
    else current.push(message);
  }
  return result;
}

let fixed = false;

/** Installs the one-pass grouping if kafkajs's producer is not loaded yet; returns whether it is installed. */
export function fixKafkajsGrouping(): boolean {
  if (fixed) return true;
  if (require.cache[require.resolve(SEND_MESSAGES_MODULE)] !== undefined) return false;
  require(GROUPING_MODULE);
  const module = require.cache[require.resolve(GROUPING_MODULE)];
  if (module === undefined || typeof module.exports !== 'function') return false;
  module.exports = groupMessagesPerPartition;
  fixed = true;
  return true;
}

export function kafkajsGroupingFixed(): boolean {
  return fixed;
}
