import type { Producer } from '@banstream/kafka';

/**
 * The control plane's idempotent producer, replaced after a send that failed. kafkajs
 * gives a failed request's sequence numbers to the next one; had the failed change
 * been written after all (its answer lost), the broker would take the next change for
 * a duplicate of it, acknowledge it and not write it. A new producer id starts its
 * sequence afresh, so no later change can be mistaken for one whose fate is unknown.
 */
export class ProducerSlot {
  private producer: Producer | undefined;
  private connecting: Promise<void> | undefined;

  constructor(private readonly create: () => Producer) {}

  /** The producer for the next send, connected (a new one after a failure). */
  async current(): Promise<Producer> {
    const producer = (this.producer ??= this.create());
    this.connecting ??= producer.connect().catch((error: unknown) => {
      // Not connected: the next send tries again with a new producer.
      this.retire(producer);
      throw error;
    });
    await this.connecting;
    return producer;
  }

  /** Takes `producer` out of use if it is still the current one; it is disconnected in the background. */
  retire(producer: Producer): void {
    if (this.producer !== producer) return;
    this.producer = undefined;
    this.connecting = undefined;
    void producer.disconnect().catch(() => undefined);
  }

  async close(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    await producer?.disconnect();
  }
}
