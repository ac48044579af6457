import { describe, expect, it } from 'vitest';
import { eventPartitionKey } from '@banstream/core';
import { SCHEMA_NAMES, type DlqRecord } from '@banstream/schemas';
import { waitUntil } from './support/infra.js';
import { produceOrFail } from './support/kafka.js';
import { catalog, event, TopicTail } from './support/aggregator.js';
import { FLOODER, floodSuite } from './support/flood-suite.js';
/** Poisoned records, one after the other on the flood's partition. */
const RECORDS = 6;
/** Events per poisoned record, every one dated an hour ahead: a record of about 180 KB. */
const EVENTS = 3_000;

/**
 * Attack on issue 25's "no record stops a partition", found by the attack review: an
 * events record whose events are all invalid (here dated an hour ahead) costs time
 * quadratic in its length, as each invalid event is written alone for the DLQ after
 * decoding the whole record again (EventsStage.single). 3,000 such events, 180 KB, hold
 * a record past the 5 s budget: the watchdog kills the worker, which restarts and
 * replays. Each distinct record of that kind costs one kill, so a trickle of them keeps
 * the aggregator down. Refusing an event must cost time proportional to the record.
 */
describe('attack: records of invalid events', () => {
  const suite = floodSuite();

  it('dead-letters them within the budget, and bans the flood behind them at once', async () => {
    const { kafka, producer, topics } = suite.broker;
    const dlq = await new TopicTail<DlqRecord>(kafka, topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
    const a = await suite.aggregator({ AGGREGATOR_TICK_MS: '20', AGGREGATOR_SESSION_TIMEOUT_MS: '6000' });
    try {
      const now = Date.now();
      const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
      for (let r = 0; r < RECORDS; r++) {
        const poisoned = codec.encode({ events: Array.from({ length: EVENTS }, (_, i) => event(FLOODER, now + 3_600_000 + i, { eventId: '' })) });
        expect(poisoned.length).toBeLessThan(200 * 1024);
        await produceOrFail(producer, topics.name('events'), [{ key: eventPartitionKey(FLOODER), value: poisoned }]);
      }
      const started = Date.now();
      await suite.floodUntilBanned(a, 60_000);
      const delay = Date.now() - started;
      const stalls = await a.metric('banstream_worker_stalls_total');
      expect({ stalls, delayUnder30s: delay < 30_000 }).toEqual({ stalls: 0, delayUnder30s: true });
      // A ban goes out as soon as it is decided, ahead of the dead letters of its fetch: they follow.
      const refused = () => dlq.records.filter((r) => r.value?.reasonCode === 'EVENT_TIME_OUT_OF_RANGE').length;
      await waitUntil(
        () => refused() >= RECORDS * EVENTS,
        () => `every invalid event dead-lettered (${refused()})`,
        30_000,
        100,
      );
      expect(refused()).toBe(RECORDS * EVENTS);
    } finally {
      await dlq.stop();
    }
  }, 240_000);
});
