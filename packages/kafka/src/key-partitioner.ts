import { keyPartition } from '@banstream/core';
import type { ICustomPartitioner } from 'kafkajs';
import { kafkajs } from './kafkajs.js';

/** Where KeyPartitioner put each message it was last asked about (kafkajs passes the sender's objects through). */
const routed = new WeakMap<object, number>();

/**
 * kafkajs's DefaultPartitioner with keyPartition for keyed records: an explicit
 * partition wins, a keyed record goes where murmur2 puts it, a record without a key
 * goes round-robin as kafkajs does it. It notes where each message went, for
 * unansweredMessages.
 */
export const KeyPartitioner: ICustomPartitioner = () => {
  const unkeyed = kafkajs().Partitioners.DefaultPartitioner();
  return (args) => {
    const { message, partitionMetadata } = args;
    const partition =
      message.partition !== null && message.partition !== undefined
        ? message.partition
        : message.key === null || message.key === undefined
          ? unkeyed(args)
          : keyPartition(message.key, partitionMetadata.length);
    routed.set(message, partition);
    return partition;
  };
};

/**
 * The messages of a send that resolved although their partition got no answer. kafkajs
 * 2.2.4 keeps a send's answers per broker across its retries and retries only brokers
 * that have not answered: a partition whose leader died and moved to a broker that had
 * already answered for another partition of the same send is sent nowhere, and the send
 * resolves. Sending these again with the same idempotent producer is safe: kafkajs gave
 * their sequence numbers back, so a copy the dead leader did replicate is taken by the
 * new leader as a duplicate. Only for producers made with KeyPartitioner.
 */
export function unansweredMessages<M extends object>(
  sent: readonly { topic: string; messages: readonly M[] }[],
  answers: readonly { topicName: string; partition: number }[],
): { topic: string; messages: M[] }[] {
  // Per topic, not a text per message: this runs after every send, over every message.
  const answered = new Map<string, Set<number>>();
  for (const a of answers) {
    let partitions = answered.get(a.topicName);
    if (!partitions) answered.set(a.topicName, (partitions = new Set()));
    partitions.add(a.partition);
  }
  const left: { topic: string; messages: M[] }[] = [];
  for (const { topic, messages } of sent) {
    const partitions = answered.get(topic);
    const unanswered = messages.filter((m) => {
      const partition = routed.get(m);
      if (partition === undefined) throw new TypeError(`unansweredMessages: a message for ${topic} was not placed by KeyPartitioner (make the producer with createPartitioner: KeyPartitioner)`);
      return partitions === undefined || !partitions.has(partition);
    });
    if (unanswered.length > 0) left.push({ topic, messages: unanswered });
  }
  return left;
}

/**
 * Sends `topicMessages` with `send`, then again, by the same producer, the messages of
 * every partition a send resolved without (unansweredMessages), until each one is
 * answered. `onResend` hears each repeat before it goes (to log it); it may throw to
 * give up (a sink being closed). Only for producers made with KeyPartitioner.
 */
export async function sendUntilAnswered<M extends object>(
  send: (topicMessages: { topic: string; messages: M[] }[]) => Promise<readonly { topicName: string; partition: number }[]>,
  topicMessages: { topic: string; messages: M[] }[],
  onResend?: (left: { topic: string; messages: M[] }[], round: number) => void,
): Promise<void> {
  let left = unansweredMessages(topicMessages, await send(topicMessages));
  for (let round = 1; left.length > 0; round++) {
    onResend?.(left, round);
    left = unansweredMessages(left, await send(left));
  }
}
