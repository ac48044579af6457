import { describe, expect, it } from 'vitest';
// The port as a service imports it, without installKafkaPatches(): a test file runs in a process of its own.
import { createKafka } from './index.js';
import { captureLogger } from '../../../test/support/infra.js';

const UNGUARDED = /^kafkajs reads batches unguarded/;

describe('a consumer made without installKafkaPatches()', () => {
  it('is reported once, at error: one batch kafkajs cannot read would stop it', () => {
    const log = captureLogger();
    const kafka = createKafka({ brokers: ['127.0.0.1:9'], clientId: 'unit', logger: log.logger });
    kafka.producer();
    expect(log.lines().filter((l) => UNGUARDED.test(String(l.msg)))).toEqual([]);
    kafka.consumer({ groupId: 'g1' });
    kafka.consumer({ groupId: 'g2' });
    expect(log.lines().filter((l) => UNGUARDED.test(String(l.msg)))).toEqual([expect.objectContaining({ level: 50, groupId: 'g1' })]);
  });
});
