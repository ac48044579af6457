import type { Producer } from 'kafkajs';

/**
 * An idempotent producer that can be replaced by a new one: a new producer id, its
 * sequences from 0. kafkajs keeps a sequence per partition and gives a failed request's
 * back to the next, including those of partitions the broker did write when it refused
 * another partition of the same request; the broker then answers that partition's
 * next batch with OUT_OF_ORDER_SEQUENCE_NUMBER, for ever. Only a new producer ends
 * that. Its user must not send while it is renewed (one publication at a time).
 */
export class RenewableProducer {
  private current: Producer;

  constructor(private readonly make: () => Producer) {
    this.current = make();
  }

  get producer(): Producer {
    return this.current;
  }

  connect(): Promise<void> {
    return this.current.connect();
  }

  /** Connects a new producer and uses it from now on; the old one is disconnected. */
  async renew(): Promise<void> {
    const next = this.make();
    await next.connect();
    const old = this.current;
    this.current = next;
    await old.disconnect().catch(() => undefined);
  }

  disconnect(): Promise<void> {
    return this.current.disconnect();
  }
}
