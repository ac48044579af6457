import { describe, expect, it, vi } from 'vitest';
import { KeyPartitioner, type Producer } from '@banstream/kafka';
import { loadSchemaCatalog, type Ban } from '@banstream/schemas';
import { ChangeWriter, type ControlTopics } from './change-writer.js';
import { ControlState } from './control-state.js';
import { ProducerSlot } from './producer-slot.js';

const topics: ControlTopics = { policies: 'p', bans: 'b', allowlist: 'a', alerts: 'al', audit: 'au', events: 'e', feeds: 'f', history: 'h' };
const catalog = loadSchemaCatalog();
const ban = (subject: string): Ban => ({
  banId: `b-${subject}`,
  subject,
  policyId: 'manual',
  reason: 'r',
  evidenceCount: 0,
  windowSeconds: 0,
  startedAt: 0,
  expiresAt: 1e13,
  preview: false,
  escalationLevel: 0,
  origin: 'manual',
  httpStatus: 403,
  createdBy: 'alice',
});

/** A producer whose sends the test settles by hand, in the order they were made. */
class FakeProducer {
  readonly sends: { subject: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  disconnected = false;
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {
    this.disconnected = true;
  }
  /** The next answer leaves out the partition of this topic's first record (kafkajs after a leader moved). */
  skipTopic: string | undefined;
  readonly sent: { topic: string; key: string; partition: number }[][] = [];
  private readonly place = KeyPartitioner();
  sendBatch(batch: { topicMessages: { topic: string; messages: { key: string }[] }[] }): Promise<unknown> {
    // Placed as kafkajs places them, with the producer's KeyPartitioner, over three partitions.
    const routed = batch.topicMessages.flatMap(({ topic, messages }) =>
      messages.map((message) => ({ topic, key: message.key, partition: this.place({ topic, partitionMetadata: [{}, {}, {}] as never, message: message as never }) })),
    );
    this.sent.push(routed);
    const answers = [...new Map(routed.map((r) => [`${r.topic}|${r.partition}`, { topicName: r.topic, partition: r.partition }])).values()];
    const skipped = routed.find((r) => r.topic === this.skipTopic);
    this.skipTopic = undefined;
    const answered = answers.filter((a) => !(skipped && a.topicName === skipped.topic && a.partition === skipped.partition));
    return new Promise((resolve, reject) => this.sends.push({ subject: batch.topicMessages.at(-1)!.messages[0]!.key, resolve: () => resolve(answered), reject }));
  }
}

function setup(timeoutMs: number) {
  const made: FakeProducer[] = [];
  const slot = new ProducerSlot(() => {
    const p = new FakeProducer();
    made.push(p);
    return p as unknown as Producer;
  });
  const writer = new ChangeWriter(slot, topics, catalog, new ControlState(10), () => 0, timeoutMs);
  const change = (subject: string) => writer.serial(() => writer.write({ kind: 'ban', key: subject, value: ban(subject), before: undefined }, { actor: 'alice', requestId: null }));
  return { made, change };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('ChangeWriter', () => {
  it('sends again, alone, the records of a partition the send was not answered for (its leader moved)', async () => {
    const { made, change } = setup(1_000);
    const first = change('ip:192.0.2.1');
    await tick();
    made[0]!.sends[0]!.resolve();
    await expect(first).resolves.toMatchObject({ target: 'ip:192.0.2.1' });
    made[0]!.skipTopic = topics.bans;
    const second = change('ip:192.0.2.2');
    await tick();
    made[0]!.sends[1]!.resolve();
    await tick();
    expect(made[0]!.sent[2]).toEqual(made[0]!.sent[1]!.filter((r) => r.topic === topics.bans && r.partition === made[0]!.sent[1]!.find((x) => x.topic === topics.bans)!.partition));
    made[0]!.sends[2]!.resolve();
    await expect(second).resolves.toMatchObject({ target: 'ip:192.0.2.2' });
    expect(made).toHaveLength(1);
  });

  it("sends the next change through a new producer after a send failed, so it cannot take the failed one's sequence numbers", async () => {
    const { made, change } = setup(1_000);
    const first = change('ip:192.0.2.1');
    await tick();
    made[0]!.sends[0]!.reject(new Error('request timed out'));
    await expect(first).rejects.toThrow('request timed out');
    const second = change('ip:192.0.2.2');
    await tick();
    expect(made).toHaveLength(2);
    expect(made[0]!.disconnected).toBe(true);
    expect(made[1]!.sends.map((s) => s.subject)).toEqual(['ip:192.0.2.2']);
    made[1]!.sends[0]!.resolve();
    await expect(second).resolves.toMatchObject({ action: 'ban.add', target: 'ip:192.0.2.2' });
  });

  it('starts the next change only once a send that outlived its caller has settled', async () => {
    const { made, change } = setup(50);
    const first = change('ip:192.0.2.1');
    await expect(first).rejects.toThrow(/no answer within 50 ms/);
    const second = change('ip:192.0.2.1');
    await tick();
    expect(made[0]!.sends).toHaveLength(1); // the second waits: it could otherwise land before the first
    made[0]!.sends[0]!.resolve();
    await tick();
    expect(made[0]!.sends.map((s) => s.subject)).toEqual(['ip:192.0.2.1', 'ip:192.0.2.1']);
    made[0]!.sends[1]!.resolve();
    await expect(second).resolves.toMatchObject({ target: 'ip:192.0.2.1' });
  });

  it('retires a producer whose send never settles, so a hung broker does not stop every later change', async () => {
    const { made, change } = setup(30);
    await expect(change('ip:192.0.2.1')).rejects.toThrow(/no answer/);
    const second = change('ip:192.0.2.2');
    await vi.waitFor(() => expect(made[1]?.sends).toHaveLength(1), { timeout: 1_000, interval: 1 });
    expect(made[0]!.disconnected).toBe(true);
    expect(made[1]!.sends.map((s) => s.subject)).toEqual(['ip:192.0.2.2']);
    made[1]!.sends[0]!.resolve();
    await expect(second).resolves.toMatchObject({ target: 'ip:192.0.2.2' });
  });
});
