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
});
