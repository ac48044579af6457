import { afterAll, beforeAll } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { waitUntil, testInfra } from './infra.js';
import { connectTestBroker, type TestBroker } from './broker.js';
import { decodeBan, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './aggregator.js';

/** The flooding address of the attack tests, and its policy: a ban past 50 requests a minute from one IP. */
export const FLOODER = '203.0.113.66';
const FLOOD_POLICY = { id: 'flood', key: ['ip'], threshold: { count: 50, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } };

export interface FloodSuite {
  /** Set once the suite's beforeAll has run. */
  readonly broker: TestBroker;
  /** A real aggregator process on the suite's topics, stopped after the suite. */
  aggregator(env?: Record<string, string>): Promise<Aggregator>;
  /** 120 requests from FLOODER, then the ban the aggregator publishes for them (within `timeoutMs`). */
  floodUntilBanned(a: Aggregator, timeoutMs: number): Promise<Ban>;
}

/**
 * The frame of the attack tests: a broker with 3 partitions per topic, the flood
 * policy and `policies`, aggregators stopped after the suite. Each test plants its
 * hostile input, then shows the flood behind it is still banned.
 */
export function floodSuite(policies: (Record<string, unknown> & { id: string })[] = []): FloodSuite {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    for (const policy of [FLOOD_POLICY, ...policies]) await publishPolicy(broker.producer, broker.topics.name('policies'), policy);
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    await broker?.close();
  });

  return {
    get broker() {
      if (!broker) throw new Error('floodSuite: the broker is set in beforeAll');
      return broker;
    },
    async aggregator(env = {}) {
      const b = this.broker;
      const a = await startAggregator({ ...b.env, AGGREGATOR_GROUP_ID: `${b.topics.prefix}aggregator`, ...env });
      running.push(a);
      return a;
    },
    async floodUntilBanned(a, timeoutMs) {
      const { kafka, producer, topics } = this.broker;
      const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
      try {
        await publishEvents(
          producer,
          topics.name('events'),
          Array.from({ length: 120 }, (_, i) => event(FLOODER, Date.now() + i)),
          20,
        );
        return await waitUntil(
          () => bans.latest().get(`ip:${FLOODER}`),
          () => `the flood banned\n${a.proc.output().slice(-3000)}`,
          timeoutMs,
          100,
        );
      } finally {
        await bans.stop();
      }
    },
  };
}
