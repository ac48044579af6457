import { describe, expect, it, vi } from 'vitest';
import type { Admin, Consumer } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
import { Writable } from 'node:stream';
import { AssignedPartitions } from './assigned-partitions.js';

/** A consumer whose group joins the test triggers, and an admin that knows two offsets per partition. */
function setup() {
  const handlers = new Map<string, (e: { payload: { memberId?: string; memberAssignment: Record<string, number[]> } }) => void>();
  const consumer = { events: { GROUP_JOIN: 'join', CRASH: 'crash' }, on: (name: string, f: () => void) => handlers.set(name, f), seek: vi.fn() } as unknown as Consumer;
  const admin = {
    fetchTopicOffsetsByTimestamp: async () => [
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ],
    fetchOffsets: async () => [
      {
        topic: 'events',
        partitions: [
          { partition: 0, offset: '5' },
          { partition: 1, offset: '5' },
        ],
      },
    ],
  } as unknown as Admin;
  const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });
  let created = 0;
  const assigned = new AssignedPartitions({ consumer, admin, topic: 'events', groupId: 'g', logger, horizonMs: () => 1, nowMs: () => 0, create: () => ++created });
  const join = async (partitions: number[], memberId?: string) => {
    handlers.get('join')!({ payload: { memberId, memberAssignment: { events: partitions } } });
    await vi.waitFor(() => expect(assigned.ready && partitions.every((p) => assigned.has(p))).toBe(true));
  };
  const seeks = () => (consumer.seek as unknown as ReturnType<typeof vi.fn>).mock.calls.map(([s]) => ({ partition: (s as { partition: number }).partition, offset: (s as { offset: string }).offset }));
  return { assigned, join, seeks, created: () => created, crash: () => handlers.get('crash')!({ payload: { memberAssignment: {} } }) };
}

describe('AssignedPartitions.release', () => {
  it('rebuilds the same partitions from a replay once the member was evicted, instead of continuing its old state', async () => {
    const { assigned, join, created } = setup();
    await join([0, 1]);
    expect(assigned.accept(0, '0')).toEqual({ state: 1, live: false });
    const lost = assigned.releaser();
    lost();
    expect(assigned.has(0)).toBe(false);
    expect(assigned.accept(0, '1')).toBeUndefined();
    await join([0, 1]);
    expect(created()).toBe(4);
    expect(assigned.accept(0, '0')).toMatchObject({ live: false });
  });

  it('keeps what it holds through a rebalance as the same member, and rebuilds it when it joined as a new one (the group had evicted it)', async () => {
    const { assigned, join, created } = setup();
    await join([0], 'member-1');
    expect(assigned.accept(0, '0')).toEqual({ state: 1, live: false });
    await join([0], 'member-1');
    expect(created()).toBe(1);
    expect(assigned.accept(0, '1')).toEqual({ state: 1, live: false });
    // Evicted and joined again (kafkajs's rejoin after UNKNOWN_MEMBER_ID takes a new member id): no failed commit told it.
    await join([0], 'member-2');
    expect(created()).toBe(2);
    expect(assigned.accept(0, '2')).toBeUndefined();
    expect(assigned.accept(0, '0')).toEqual({ state: 2, live: false });
  });

  it('forgets its partitions when the consumer crashes, as kafkajs restarts it from the committed offsets', async () => {
    const { assigned, join, crash } = setup();
    await join([1]);
    crash();
    expect(assigned.has(1)).toBe(false);
  });

  it('does not forget an assignment that came after the failed commit began', async () => {
    const { assigned, join } = setup();
    await join([0]);
    const late = assigned.releaser();
    assigned.releaser()();
    await join([0]);
    late();
    expect(assigned.has(0)).toBe(true);
  });
});

describe('AssignedPartitions.counted', () => {
  it('knows the records this member counted, once the stream is its own, so a redelivery can be moved past', async () => {
    const { assigned, join } = setup();
    await join([0]);
    // Sought to 0, nothing seen yet: a record elsewhere is a stale fetch, not a redelivery.
    expect(assigned.counted(0, '3')).toBe(false);
    for (const offset of ['0', '1', '2', '3']) expect(assigned.accept(0, offset)).toBeDefined();
    // kafkajs fetches from the committed offset again after a rebalance the member survived.
    expect(assigned.accept(0, '1')).toBeUndefined();
    expect(assigned.counted(0, '1')).toBe(true);
    expect(assigned.counted(0, '3')).toBe(true);
    expect(assigned.counted(0, '4')).toBe(false);
    expect(assigned.counted(1, '0')).toBe(false);
  });
});

describe('AssignedPartitions after a rebalance the member survives', () => {
  it('seeks each partition it keeps to its next record, mid-replay too, instead of the committed offset kafkajs would use', async () => {
    const { assigned, join, seeks } = setup();
    await join([0, 1]);
    expect(seeks()).toEqual([
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ]);
    for (const offset of ['0', '1', '2']) assigned.accept(0, offset);
    await join([0]);
    // Partition 0 goes on at 3 (still replaying: the committed offset is 5); partition 1 was lost.
    expect(seeks().slice(2)).toEqual([{ partition: 0, offset: '3' }]);
    expect(assigned.accept(0, '3')).toMatchObject({ live: false });
    expect(assigned.has(1)).toBe(false);
  });
});

describe("AssignedPartitions and a stand-in for a batch Kafka's client could not read", () => {
  it('takes it as the next record when the offset sought is among those it stands for, first record or not', async () => {
    const { assigned, join } = setup();
    await join([0, 1]);
    // Sought to 0: a stand-in at 4 for offsets 0 to 4 is the next record (without its range it would be refused for ever).
    expect(assigned.accept(0, '4')).toBeUndefined();
    expect(assigned.accept(0, '4', '0')).toMatchObject({ live: false });
    expect(assigned.accept(0, '5')).toBeDefined();
    // Sought to 0, the batch starting after it: a stale fetch, as for any record.
    expect(assigned.accept(1, '4', '2')).toBeUndefined();
    expect(assigned.accept(1, '0')).toBeDefined();
    // Once synced, one whose offsets were counted before is not counted again.
    expect(assigned.accept(1, '0', '0')).toBeUndefined();
  });
});
