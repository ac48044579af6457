import type { Consumer } from './kafkajs.js';

/**
 * Calls `onGivenUp` when kafkajs stops the consumer for good: after an error it does not
 * retry (an ACL refusal, or a TypeError, RangeError, ReferenceError or SyntaxError
 * anywhere in its fetch loop, its own or its batch handler's), it disconnects the
 * consumer and never starts it again, and nothing else says so. Not called for the
 * crashes kafkajs restarts from by itself (a broker away too long).
 */
export function whenGivenUp(consumer: Consumer, onGivenUp: (error: Error) => void): void {
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) onGivenUp(payload.error);
  });
}
