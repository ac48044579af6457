import { describe, expect, it } from 'vitest';
import { formatReport } from './report.js';
import { runFuzz } from './runner.js';
import { COSTLESS_EVENTS, COSTLY_EVENTS, inputsIn, KAFKAJS_READER, MUTATED_FETCHES, PATCH_READER } from './tally.js';

/**
 * A fixed-seed slice of `npm run fuzz`, the same harness in one watched worker: any
 * crash, slow decode, disagreement with the reference or lost event fails it, and
 * the report it prints names the input to replay.
 */
describe('the differential fuzz harness, seed 42', () => {
  it('finds every reader agreeing with the reference on 1,500 generated and mutated records', async () => {
    // Slow here means over 100 ms (not npm run fuzz's 10): vitest runs files side by side on a shared machine.
    const result = await runFuzz({ seconds: 30, seed: 42, workers: 1, maxInputs: 1_500, limitMs: 100, hangMs: 3_000, stopAtFirst: true });
    if (result.failures > 0) expect.fail(formatReport(result));
    // The slice really ran every reader, and on inputs each of them accepts.
    expect(inputsIn(result.tally)).toBe(1_500);
    for (const reader of ['catalog.codec', 'aggregator.reader', 'aggregator.reader+headers', 'aggregator.readTail', 'aggregator.avsc', 'aggregator.avsc+headers', 'gateway.scan', 'gateway.slow']) {
      expect(result.tally[reader]!.tried, reader).toBeGreaterThan(700);
      expect(result.tally[reader]!.accepted, reader).toBeGreaterThan(30);
    }
    expect(result.tally['gateway→aggregator']!.tried).toBeGreaterThan(10);
    // Costs: records that carry costs other than 1, and records of the writer before costs (read as 1), compared across every reader.
    expect(result.tally[COSTLY_EVENTS]?.tried ?? 0).toBeGreaterThan(10);
    expect(result.tally[COSTLESS_EVENTS]?.tried ?? 0).toBeGreaterThan(10);
    expect(Object.keys(result.tally).filter((r) => r.startsWith('catalog.codec:')).length).toBe(12);
    // Kafka fetches: the patch's reader against kafkajs's where it reads every batch, and alone where it stands in for one.
    expect(result.tally[PATCH_READER]!.tried).toBeGreaterThan(80);
    expect(result.tally[MUTATED_FETCHES]!.tried).toBeGreaterThan(70);
    expect(result.tally[KAFKAJS_READER]!.accepted).toBeGreaterThan(20);
    expect(result.tally[PATCH_READER]!.tried - result.tally[KAFKAJS_READER]!.tried).toBeGreaterThan(10);
  }, 60_000);
});
