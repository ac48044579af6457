import { describe, expect, it } from 'vitest';
import type { Pending } from './event-buffer.js';
import { encodeGroups, groupByKey } from './records.js';

const pending = (values: string[]): Pending<string>[] => values.map((value, seq) => ({ value, bytes: 1, seq }));
/** Test key: the part before the dot; values without a dot have no key. */
const keyOf = (v: string) => (v.includes('.') ? v.split('.')[0] : undefined);

describe('groupByKey', () => {
  it('groups by key in order of first appearance, keeps order within a key, and caps each group', () => {
    const { groups, invalid } = groupByKey(pending(['a.1', 'b.1', 'a.2', 'bad', 'a.3', 'b.2', 'a.4']), keyOf, 3);
    expect(groups.map((g) => [g.key, g.items.map((i) => i.value)])).toEqual([
      ['a', ['a.1', 'a.2', 'a.3']],
      ['b', ['b.1', 'b.2']],
      ['a', ['a.4']],
    ]);
    expect(invalid.map((i) => i.value)).toEqual(['bad']);
  });
});

describe('encodeGroups', () => {
  const encode = (events: string[]) => {
    if (events.some((e) => e.endsWith('!'))) throw new Error('not encodable');
    return Buffer.from(events.join(','));
  };
  const isValid = (e: string) => !e.endsWith('!');

  it('encodes one record per group, and isolates the events that break a group', () => {
    const { groups } = groupByKey(pending(['a.1', 'a.2!', 'a.3', 'b.1!', 'c.1']), keyOf, 10);
    const { records, invalid } = encodeGroups(groups, encode, isValid);
    expect(records.map((r) => [r.key, r.value.toString(), r.items.length])).toEqual([
      ['a', 'a.1,a.3', 2],
      ['c', 'c.1', 1],
    ]);
    expect(invalid.map((i) => i.value)).toEqual(['a.2!', 'b.1!']);
  });

  it('drops a whole group when it cannot be encoded even without the events said invalid', () => {
    const { groups } = groupByKey(pending(['a.1', 'a.2']), keyOf, 10);
    const { records, invalid } = encodeGroups(
      groups,
      () => {
        throw new Error('encoder broken');
      },
      () => true,
    );
    expect(records).toEqual([]);
    expect(invalid).toHaveLength(2);
  });
});

describe('groupByKey with a span cap', () => {
  /** Value `key@ms`. */
  const timed = (values: string[]): Pending<string>[] => values.map((value, seq) => ({ value, bytes: 1, seq }));
  const key = (v: string) => v.split('@')[0];
  const time = (v: string) => Number(v.split('@')[1]);

  it("starts a new group when an event is further than the span from its group's first, so a backlog leaves in time order", () => {
    // A backlog: a busy key `a` and a quiet `b` over 3 s; a cap of 1 s.
    const backlog = ['a@0', 'b@100', 'a@500', 'a@1000', 'a@1001', 'b@1500', 'a@2100', 'b@2900'];
    const { groups } = groupByKey(timed(backlog), key, 500, time, 1000);
    expect(groups.map((g) => g.items.map((i) => i.value))).toEqual([['a@0', 'a@500', 'a@1000'], ['b@100'], ['a@1001'], ['b@1500'], ['a@2100'], ['b@2900']]);
    // What a partition holding both keys receives: no event more than the span behind one before it.
    let newest = -Infinity;
    for (const g of groups)
      for (const i of g.items) {
        expect(time(i.value)).toBeGreaterThanOrEqual(newest - 1000);
        newest = Math.max(newest, time(i.value));
      }
  });

  it('without times, only the event cap applies', () => {
    const { groups } = groupByKey(timed(['a@0', 'a@5000']), key, 500, () => undefined, 1000);
    expect(groups).toHaveLength(1);
  });
});
