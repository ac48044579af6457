import { describe, expect, it } from 'vitest';
import { keepKafkajsMemberAcrossRestarts, rejoinAsSameMember } from './member-rejoin-fix.js';

/**
 * A coordinator that remembers its members, and a ConsumerGroup with kafkajs's join: an
 * empty member id gets a new one, a known one is kept, an unknown one is refused and
 * kafkajs joins afresh (consumerGroup.js joinAndSync); leave fails while the coordinator is down.
 */
function world() {
  const coordinator = { members: new Set<string>(), next: 0, up: true };
  class Group {
    memberId: string | null = null;
    constructor(
      readonly groupId: string,
      readonly cluster: object,
    ) {}
    async joinAndSync(): Promise<void> {
      if (this.memberId && !coordinator.members.has(this.memberId)) this.memberId = null; // UNKNOWN_MEMBER_ID, then a fresh join
      if (!this.memberId) coordinator.members.add((this.memberId = `member-${++coordinator.next}`));
    }
    async leave(): Promise<void> {
      if (!this.memberId) return;
      if (!coordinator.up) throw new Error('Connection error: connect ECONNREFUSED');
      coordinator.members.delete(this.memberId);
      this.memberId = null;
    }
  }
  return { coordinator, Group };
}

describe('keepKafkajsMemberAcrossRestarts', () => {
  it('patches the installed kafkajs (a kafkajs upgrade that moves ConsumerGroup fails here)', () => {
    expect(keepKafkajsMemberAcrossRestarts()).toBe(true);
    expect(keepKafkajsMemberAcrossRestarts()).toBe(true);
  });

  it('a consumer restarted after its leave was lost joins as the member it was: the group has one member, not two', async () => {
    const { coordinator, Group } = world();
    expect(rejoinAsSameMember(Group.prototype)).toBe(true);
    const cluster = {};
    const first = new Group('g', cluster);
    await first.joinAndSync();
    coordinator.up = false;
    await expect(first.leave()).rejects.toThrow(); // kafkajs's runner swallows this on a crash
    coordinator.up = true;
    const restarted = new Group('g', cluster);
    await restarted.joinAndSync();
    expect(restarted.memberId).toBe(first.memberId);
    expect([...coordinator.members]).toEqual(['member-1']);
  });

  it('joins afresh after a leave the coordinator took, for another consumer, or when the group forgot the member', async () => {
    const { coordinator, Group } = world();
    rejoinAsSameMember(Group.prototype);
    const cluster = {};
    const a = new Group('g', cluster);
    await a.joinAndSync();
    await a.leave();
    const b = new Group('g', cluster);
    await b.joinAndSync();
    expect(b.memberId).toBe('member-2');
    const other = new Group('g', {});
    await other.joinAndSync();
    expect(other.memberId).toBe('member-3');
    coordinator.members.clear(); // the old member's session expired
    const c = new Group('g', cluster);
    await c.joinAndSync();
    expect(c.memberId).toBe('member-4');
  });

  it('leaves kafkajs alone when ConsumerGroup has not the expected shape', () => {
    expect(rejoinAsSameMember({ joinAndSync() {} })).toBe(false);
  });
});
