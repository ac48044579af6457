import { describe, expect, it } from 'vitest';
import { GROUPING_MODULE, groupMessagesPerPartition } from './grouping-fix.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

type Group = typeof groupMessagesPerPartition;

/** kafkajs's own, loaded afresh so a replaced module cache entry does not hide it. */
function kafkajsGrouping(): Group {
  return freshKafkajsModule(GROUPING_MODULE);
}

describe('groupMessagesPerPartition (one pass)', () => {
  it('gives what kafkajs gives: each partition its messages in send order, nothing without partition metadata', () => {
    const kafkajs = kafkajsGrouping();
    let seed = 5;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (let round = 0; round < 100; round++) {
      const partitions = Math.floor(random() * 13);
      const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i }));
      const messages = Array.from({ length: Math.floor(random() * 300) }, (_, i) => ({ key: `k${i}`, value: `v${i}`, to: Math.floor(random() * Math.max(1, partitions)) }));
      const args = { topic: 't', partitionMetadata, messages, partitioner: ({ message }: { message: unknown }) => (message as { to: number }).to };
      const ours = groupMessagesPerPartition(args);
      expect(ours).toEqual(kafkajs(args));
      expect(Object.keys(ours)).toEqual(Object.keys(kafkajs(args)));
    }
  });
});
