import { stat } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AnswerBatch } from './answer-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('AnswerBatch', () => {
  it('lets the first answer of a turn go at once, and holds the later ones until the turn ends, releasing them together in order', async () => {
    const batch = new AnswerBatch();
    expect(batch.turn()).toBeUndefined();
    const order: string[] = [];
    const held = ['b', 'c', 'd'].map((name) => batch.turn()!.then(() => order.push(name)));
    // Work queued in the same turn (promise continuations) runs before any of them.
    await Promise.resolve();
    await Promise.resolve();
    order.push('same turn');
    await Promise.all(held);
    expect(order).toEqual(['same turn', 'b', 'c', 'd']);
  });

  it('starts every turn afresh: a lone answer in a later turn goes at once', async () => {
    const batch = new AnswerBatch();
    expect(batch.turn()).toBeUndefined();
    await batch.turn();
    await nextTurn();
    expect(batch.turn()).toBeUndefined();
    expect(batch.turn()).toBeInstanceOf(Promise);
  });

  it('releases the held answers before a timer of the next turn fires', async () => {
    const batch = new AnswerBatch();
    const order: string[] = [];
    // As in the sidecar, from an I/O callback (the poll phase that read the requests):
    // only then does Node promise the check phase before the next timers phase.
    let held: Promise<unknown> | undefined;
    await new Promise<void>((resolve) =>
      stat(import.meta.filename, () => {
        setTimeout(() => order.push('timer'), 0);
        batch.turn();
        held = batch.turn()!.then(() => order.push('answer'));
        resolve();
      }),
    );
    await held;
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual(['answer', 'timer']);
  });
});
