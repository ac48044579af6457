import type { PartitionOffset } from './background-commits.js';

/** Commits that stay unanswered until `answer()`ed, one at a time in order, as ones to a coordinator being moved. */
export function heldCommits() {
  const sent: PartitionOffset[][] = [];
  const answers: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const commit = (offsets: PartitionOffset[]) =>
    new Promise<void>((resolve, reject) => {
      sent.push(offsets);
      answers.push({ resolve, reject });
    });
  const answer = async (error?: unknown) => {
    const a = answers.shift()!;
    if (error === undefined) a.resolve();
    else a.reject(error);
    await new Promise((r) => setImmediate(r));
  };
  /** Resolves once `n` commits have been sent (each is sent a turn after it is handed over). */
  const sentCount = async (n: number) => {
    for (let turns = 0; sent.length < n; turns++) {
      if (turns > 10_000) throw new Error(`${sent.length} commits sent, ${n} expected`);
      await new Promise((r) => setImmediate(r));
    }
  };
  return { sent, commit, answer, sentCount };
}
