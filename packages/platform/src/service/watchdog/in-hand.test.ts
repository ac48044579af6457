import { describe, expect, it } from 'vitest';
import { InHand, inHandBuffer, lookAt, StallJudge } from './in-hand.js';

describe('InHand and lookAt', () => {
  it('shows the record in hand between begin and end, and nothing outside', () => {
    const buffer = inHandBuffer();
    const hand = new InHand(buffer);
    expect(lookAt(buffer).record).toBeUndefined();
    hand.begin(2, 7, 2 ** 40 + 3, 1_000);
    expect(lookAt(buffer).record).toEqual({ topic: 2, partition: 7, offset: 2 ** 40 + 3, sinceMs: 1_000 });
    expect(hand.end(1_250)).toBe(250);
    expect(lookAt(buffer).record).toBeUndefined();
    hand.begin(0, 0, 0, 2_000);
    expect(lookAt(buffer).record?.sinceMs).toBe(2_000);
  });

  it('counts beats', () => {
    const buffer = inHandBuffer();
    const hand = new InHand(buffer);
    const before = lookAt(buffer).beats;
    hand.beat();
    hand.beat();
    expect(lookAt(buffer).beats).toBe(before + 2);
  });
});

describe('StallJudge', () => {
  const limits = { budgetMs: 100, loopMs: 1_000 };
  const idle = (beats: number) => ({ generation: 2, record: undefined, beats });
  const holding = (sinceMs: number, beats = 0) => ({ generation: 3, record: { topic: 1, partition: 4, offset: 9, sinceMs }, beats });

  it('calls a record held past the budget a stall, and not one held up to it', () => {
    const judge = new StallJudge(limits);
    expect(judge.look(holding(1_000), 1_100)).toBeUndefined();
    expect(judge.look(holding(1_000), 1_101)).toEqual({ kind: 'record', generation: 3, topic: 1, partition: 4, offset: 9, heldMs: 101 });
  });

  it('calls an event loop silent past its limit a stall when no record is in hand', () => {
    const judge = new StallJudge(limits);
    expect(judge.look(idle(5), 0)).toBeUndefined();
    expect(judge.look(idle(5), 1_000)).toBeUndefined();
    expect(judge.look(idle(5), 1_001)).toEqual({ kind: 'loop', silentMs: 1_001 });
    // A beat starts the silence afresh.
    expect(judge.look(idle(6), 1_002)).toBeUndefined();
    expect(judge.look(idle(6), 2_002)).toBeUndefined();
  });

  it('leaves a record within its budget to the record check, however long the loop has been silent', () => {
    const judge = new StallJudge(limits);
    judge.look(idle(1), 0);
    expect(judge.look(holding(4_950, 1), 5_000)).toBeUndefined();
  });

  it('does not count a stop of the whole process (SIGSTOP, a frozen VM) against a record or the event loop', () => {
    const judge = new StallJudge({ ...limits, pauseMs: 500 });
    expect(judge.look(holding(1_000), 1_050)).toBeUndefined();
    // 15 s without a look: the watchdog thread was stopped too.
    expect(judge.look(holding(1_000), 16_050)).toBeUndefined();
    expect(judge.look(holding(1_000), 16_100)).toBeUndefined();
    expect(judge.look(holding(1_000), 16_101)).toEqual(expect.objectContaining({ kind: 'record', heldMs: 101 }));
    const idleJudge = new StallJudge({ ...limits, pauseMs: 500 });
    expect(idleJudge.look(idle(1), 0)).toBeUndefined();
    expect(idleJudge.look(idle(1), 400)).toBeUndefined();
    expect(idleJudge.look(idle(1), 20_400)).toBeUndefined();
    expect(idleJudge.look(idle(1), 20_900)).toBeUndefined();
    expect(idleJudge.look(idle(1), 21_001)).toEqual({ kind: 'loop', silentMs: 1_001 });
  });

  it('credits a record with at most the time it has been in hand, however long the pause', () => {
    const judge = new StallJudge({ ...limits, pauseMs: 500 });
    judge.look(idle(1), 0);
    // Stopped from about 50 to 9 990; the main thread took this record at 10 000 and the watchdog looks at 10 050.
    expect(judge.look(holding(10_000, 2), 10_050)).toBeUndefined();
    expect(judge.look(holding(10_000, 2), 10_151)).toEqual(expect.objectContaining({ kind: 'record', heldMs: 101 }));
  });
});
