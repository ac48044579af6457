import { describe, expect, it } from 'vitest';
import { MemberCommits } from './member-commits.js';
import { heldCommits } from './held-commits.fakes.js';

const WAIT_MS = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Whether `p` has settled within `ms`. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await sleep(ms);
  return done;
}

describe('MemberCommits', () => {
  it('a handler waits for its commit when the coordinator answers in time', async () => {
    const { sent, commit, answer, sentCount } = heldCommits();
    const commits = new MemberCommits(commit, 10_000);
    const call = commits.commit('events', 0, '5');
    await sentCount(1);
    expect(await settledWithin(call, 20)).toBe(false);
    expect(sent).toEqual([[{ topic: 'events', partition: 0, offset: '5' }]]);
    await answer();
    expect(await settledWithin(call, 5)).toBe(true);
  });

  it('goes on after waitMs when the commit is not answered, and later handlers do not wait while it is under way', async () => {
    const { sent, commit, answer, sentCount } = heldCommits();
    const commits = new MemberCommits(commit, WAIT_MS);
    const first = commits.commit('events', 0, '5');
    expect(await settledWithin(first, WAIT_MS / 2)).toBe(false);
    await first;
    // Still unanswered: the next handler hands its offsets over and returns.
    const next = commits.commit('events', 0, '9');
    expect(await settledWithin(next, 5)).toBe(true);
    await sentCount(1);
    expect(sent).toHaveLength(1);
    await answer();
    await sentCount(2);
    expect(sent[1]).toEqual([{ topic: 'events', partition: 0, offset: '9' }]);
    await answer();
    await commits.settled();
  });

  it('throws the failure of the commit a handler waited for', async () => {
    const { commit, answer, sentCount } = heldCommits();
    const commits = new MemberCommits(commit, 10_000);
    const call = commits.commit('events', 1, '3').catch((e: unknown) => e);
    await sentCount(1);
    const refused = Object.assign(new Error('The coordinator is not aware of this member'), { type: 'UNKNOWN_MEMBER_ID' });
    await answer(refused);
    expect(await call).toBe(refused);
    // Thrown once: the next commit goes on.
    const next = commits.commit('events', 1, '4');
    await sentCount(2);
    await answer();
    await expect(next).resolves.toBeUndefined();
  });

  it('throws the failure of a commit no handler waited for to the next handler, once', async () => {
    const { sent, commit, answer, sentCount } = heldCommits();
    const commits = new MemberCommits(commit, WAIT_MS);
    const first = commits.commit('events', 0, '5');
    await sentCount(1);
    await first;
    const gone = new Error('Broker 1 not found in the cached metadata');
    await answer(gone);
    await expect(commits.commit('events', 0, '6')).rejects.toBe(gone);
    expect(sent).toHaveLength(1);
    const next = commits.commit('events', 0, '7');
    await sentCount(2);
    await answer();
    await expect(next).resolves.toBeUndefined();
    expect(sent[1]).toEqual([{ topic: 'events', partition: 0, offset: '7' }]);
  });

  it('after a rebalance sends no offset kept from before and throws no failure of a commit sent before', async () => {
    const { sent, commit, answer, sentCount } = heldCommits();
    const commits = new MemberCommits(commit, WAIT_MS);
    const first = commits.commit('events', 0, '5');
    await sentCount(1);
    await first;
    await commits.commit('events', 2, '8');
    commits.rejoined();
    await answer(Object.assign(new Error('The provided generation id is not the current generation'), { type: 'ILLEGAL_GENERATION' }));
    await commits.settled();
    expect(sent).toEqual([[{ topic: 'events', partition: 0, offset: '5' }]]);
    // The new generation's offsets go, and may be below the dropped ones.
    const next = commits.commit('events', 0, '4');
    await sentCount(2);
    await answer();
    await expect(next).resolves.toBeUndefined();
    expect(sent[1]).toEqual([{ topic: 'events', partition: 0, offset: '4' }]);
  });

  it('never sends an offset of a partition below one sent before it', async () => {
    const { sent, commit, answer, sentCount } = heldCommits();
    const commits = new MemberCommits(commit, WAIT_MS);
    const first = commits.commit('events', 0, '10');
    await sentCount(1);
    await first;
    await commits.commit('events', 0, '7');
    await commits.commit('events', 0, '12');
    await answer();
    await sentCount(2);
    await answer();
    await commits.settled();
    expect(sent.map((s) => s.map((o) => o.offset))).toEqual([['10'], ['12']]);
  });
});
