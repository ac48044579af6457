import { describe, expect, it } from 'vitest';
import { BackgroundCommits, type PartitionOffset } from './background-commits.js';
import { heldCommits } from './held-commits.fakes.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('BackgroundCommits', () => {
  it('returns at once; the batches of one turn go in one commit', async () => {
    const { sent, commit, answer } = heldCommits();
    const commits = new BackgroundCommits(commit, () => expect.unreachable());
    commits.add('bans', 0, '5');
    commits.add('bans', 1, '9');
    expect(sent).toEqual([]);
    await turn();
    expect(sent).toEqual([
      [
        { topic: 'bans', partition: 0, offset: '5' },
        { topic: 'bans', partition: 1, offset: '9' },
      ],
    ]);
    await answer();
    await commits.settled();
  });

  it('one commit at a time: offsets added while one is unanswered wait, and only the newest of a partition is sent', async () => {
    const { sent, commit, answer } = heldCommits();
    const commits = new BackgroundCommits(commit, () => expect.unreachable());
    commits.add('bans', 0, '5');
    await turn();
    commits.add('bans', 0, '6');
    commits.add('bans', 0, '8');
    commits.add('bans', 2, '3');
    await turn();
    expect(sent).toHaveLength(1);
    await answer();
    expect(sent[1]).toEqual([
      { topic: 'bans', partition: 0, offset: '8' },
      { topic: 'bans', partition: 2, offset: '3' },
    ]);
    await answer();
    await commits.settled();
    expect(sent).toHaveLength(2);
  });

  it('never sends an offset below one added before (a batch read again after a rejoin)', async () => {
    const { sent, commit, answer } = heldCommits();
    const commits = new BackgroundCommits(commit, () => expect.unreachable());
    commits.add('bans', 0, '10');
    commits.add('bans', 0, '4');
    await turn();
    await answer();
    commits.add('bans', 0, '9');
    commits.add('bans', 0, '10');
    await commits.settled();
    expect(sent).toEqual([[{ topic: 'bans', partition: 0, offset: '10' }]]);
  });

  it('once closed sends nothing more, and settled() waits for the commit in flight', async () => {
    const { sent, commit, answer } = heldCommits();
    const commits = new BackgroundCommits(commit, () => expect.unreachable());
    commits.add('bans', 0, '1');
    await turn();
    commits.add('bans', 0, '2');
    commits.close();
    commits.add('bans', 0, '3');
    let settled = false;
    const done = commits.settled().then(() => (settled = true));
    await turn();
    expect(settled).toBe(false);
    await answer();
    await done;
    expect(sent).toEqual([[{ topic: 'bans', partition: 0, offset: '1' }]]);
  });

  it('a failed commit is told and not sent again; the next offsets still go', async () => {
    const { sent, commit, answer } = heldCommits();
    const failures: [unknown, readonly PartitionOffset[]][] = [];
    const commits = new BackgroundCommits(commit, (error, offsets) => failures.push([error, offsets]));
    commits.add('bans', 0, '5');
    await turn();
    const gone = new Error('coordinator not available');
    await answer(gone);
    expect(failures).toEqual([[gone, [{ topic: 'bans', partition: 0, offset: '5' }]]]);
    await commits.settled();
    commits.add('bans', 0, '7');
    await turn();
    expect(sent).toEqual([[{ topic: 'bans', partition: 0, offset: '5' }], [{ topic: 'bans', partition: 0, offset: '7' }]]);
    await answer();
    await commits.settled();
  });
});
