import { describe, expect, it } from 'vitest';
import { kafkajsGroupingFixed, kafkajsLoaded } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
import { createEdgePublisher } from './publisher.js';
import type { RecordSink } from './sink.js';

const sink: RecordSink = { send: async () => undefined, close: async () => undefined };
const logger = createLogger({ service: 'test', level: 'silent' });

describe('createEdgePublisher patchKafkajs', () => {
  // One test, in order: a test file runs in a process of its own, so kafkajs starts unpatched.
  it("leaves the embedder's kafkajs alone by default, and patches it when asked", async () => {
    const plain = createEdgePublisher({ sink, logger });
    expect(kafkajsLoaded()).toBe(false);
    expect(kafkajsGroupingFixed()).toBe(false);
    await plain.close();

    const patching = createEdgePublisher({ sink, logger, patchKafkajs: true });
    expect(kafkajsGroupingFixed()).toBe(true);
    await patching.close();
  });
});
