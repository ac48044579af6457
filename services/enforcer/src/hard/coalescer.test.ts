import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalescer.js';

function harness(maxBatch: number) {
  const sent: string[][] = [];
  let pending: (() => void) | undefined;
  const coalescer = new Coalescer<string>({
    maxBatch,
    groupOf: (item) => item.charCodeAt(0),
    send: (items) => sent.push(items),
    schedule: (flush) => (pending = flush),
  });
  return { coalescer, sent, endTurn: () => pending?.() };
}

describe('Coalescer', () => {
  it('sends what arrived in one turn as one batch per group', () => {
    const { coalescer, sent, endTurn } = harness(100);
    for (const item of ['a1', 'b1', 'a2', 'a3', 'b2']) coalescer.add(item);
    expect(sent).toEqual([]);
    endTurn();
    expect(sent).toEqual([
      ['a1', 'a2', 'a3'],
      ['b1', 'b2'],
    ]);
  });

  it('sends a full batch at once, and the rest at the end of the turn', () => {
    const { coalescer, sent, endTurn } = harness(2);
    for (const item of ['a1', 'a2', 'a3']) coalescer.add(item);
    expect(sent).toEqual([['a1', 'a2']]);
    endTurn();
    expect(sent).toEqual([['a1', 'a2'], ['a3']]);
  });

  it('schedules one flush per turn and starts afresh after it', () => {
    let scheduled = 0;
    const sent: string[][] = [];
    let flush = (): void => undefined;
    const coalescer = new Coalescer<string>({
      maxBatch: 10,
      groupOf: () => 0,
      send: (b) => sent.push(b),
      schedule: (f) => {
        scheduled++;
        flush = f;
      },
    });
    coalescer.add('x');
    coalescer.add('y');
    flush();
    coalescer.add('z');
    flush();
    expect(scheduled).toBe(2);
    expect(sent).toEqual([['x', 'y'], ['z']]);
  });

  it('with a batch of one, sends every item by itself', () => {
    const { coalescer, sent } = harness(1);
    coalescer.add('a1');
    coalescer.add('a2');
    expect(sent).toEqual([['a1'], ['a2']]);
  });
});
