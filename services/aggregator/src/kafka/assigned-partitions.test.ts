import { describe, expect, it, vi } from 'vitest';
import type { Admin, Consumer } from 'kafkajs';
import { createLogger } from '@banstream/platform';
import { Writable } from 'node:stream';
import { AssignedPartitions } from './assigned-partitions.js';

/** A consumer whose group joins the test triggers, and an admin that knows two offsets per partition. */
function setup() {
  const handlers = new Map<string, (e: { payload: { memberAssignment: Record<string, number[]> } }) => void>();
  const consumer = { events: { GROUP_JOIN: 'join', CRASH: 'crash' }, on: (name: string, f: () => void) => handlers.set(name, f), seek: vi.fn() } as unknown as Consumer;
  const admin = {
    fetchTopicOffsetsByTimestamp: async () => [{ partition: 0, offset: '0' }, { partition: 1, offset: '0' }],
    fetchOffsets: async () => [{ topic: 'events', partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: '5' }] }],
  } as unknown as Admin;
  const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });
  let created = 0;
  const assigned = new AssignedPartitions({ consumer, admin, topic: 'events', groupId: 'g', logger, horizonMs: () => 1, nowMs: () => 0, create: () => ++created });
  const join = async (partitions: number[]) => {
    handlers.get('join')!({ payload: { memberAssignment: { events: partitions } } });
    await vi.waitFor(() => expect(assigned.ready && partitions.every((p) => assigned.has(p))).toBe(true));
  };
  return { assigned, join, created: () => created, crash: () => handlers.get('crash')!({ payload: { memberAssignment: {} } }) };
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
