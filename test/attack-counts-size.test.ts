import { describe, expect, it } from 'vitest';
import { waitUntil } from './support/infra.js';
import { event, publishEvents } from './support/aggregator.js';
import { floodSuite } from './support/flood-suite.js';

/** Distinct users, each seen once: every one a hot count (threshold 2, AGGREGATOR_HOT_SHARE 0.5). */
const USERS = 100_000;

/**
 * Attack on issue 25's "no record stops a partition", found by the attack review: the
 * counts and bans of a tick go out in one sendBatch, whatever their size. Events of
 * many distinct users, sent in ordinary records of 500 as the ingest gateway writes
 * them, make one tick's counts for one counts partition larger than the broker takes
 * (MESSAGE_TOO_LARGE): the DecisionFlusher retries that publication for ever, every
 * later one (bans included) waits behind it, and the stages wait on it too. This must
 * pass once decisions go out in sends the broker takes.
 */
describe('attack: one tick of counts the broker refuses', () => {
  const suite = floodSuite([{ id: 'per-user', key: ['user'], threshold: { count: 2, interval: '1h' }, action: { type: 'throttle' } }]);

  it('keeps banning after a burst of distinct users sent as the gateway sends events', async () => {
    const { producer, topics } = suite.broker;
    const a = await suite.aggregator();
    const now = Date.now();
    // Spread over 100 client networks, so over every events partition.
    const burst = Array.from({ length: USERS }, (_, i) => event(`198.51.${i % 100}.7`, now, { userId: `user-${i}-`.padEnd(120, 'x') }));
    // Records of 500 events, as the gateway's publisher writes them, a few per send (each send's batch under 1 MiB).
    for (let i = 0; i < burst.length; i += 2_000) await publishEvents(producer, topics.name('events'), burst.slice(i, i + 2_000), 500);
    await waitUntil(
      async () => (await a.metric('banstream_aggregator_subject_entries_applied_total')) >= USERS || a.proc.output().includes('publishing counts and bans failed'),
      'the burst counted',
      60_000,
      100,
    );
    expect(await suite.floodUntilBanned(a, 45_000)).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
  }, 240_000);
});
