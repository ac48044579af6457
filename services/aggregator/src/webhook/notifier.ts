import type { Consumer, Kafka } from '@banstream/kafka';
import { isBanstreamError } from '@banstream/core';
import type { Logger } from '@banstream/platform';
import { SCHEMA_NAMES, type GeoAlert, type SchemaCatalog } from '@banstream/schemas';
import type { AggregatorMetrics } from '../metrics.js';
import { deliver, type WebhookTarget } from './deliver.js';
import { signatureHeaders, slackBody } from './slack-body.js';

export interface NotifierOptions {
  kafka: Kafka;
  topic: string;
  /** One group for every instance: each alert is posted by one of them. */
  groupId: string;
  sessionTimeoutMs: number;
  logger: Logger;
  catalog: SchemaCatalog;
  target: WebhookTarget;
  secret: string | undefined;
  metrics: Pick<AggregatorMetrics, 'webhookDeliveries' | 'webhookRetries'>;
}

/** Longest wait between two heartbeats while a retry backs off. */
const HEARTBEAT_EVERY_MS = 1_000;

/**
 * Posts every alert of the alerts topic (fired and resolved) to the webhook, in
 * order, in its own consumer group: its offset moves on only once an alert is
 * delivered or given up, so a restart posts again what was in flight (receivers
 * can tell by the alert id) and a slow webhook never holds up counting. Starts
 * at the end of the topic the first time the group is seen.
 */
export class WebhookNotifier {
  readonly consumer: Consumer;
  private readonly codec;
  private readonly logger: Logger;
  private stopping = false;

  constructor(private readonly options: NotifierOptions) {
    this.codec = options.catalog.codec(SCHEMA_NAMES.geoAlert);
    this.logger = options.logger.child({ component: 'webhook' });
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      heartbeatInterval: Math.floor(options.sessionTimeoutMs / 10),
      maxWaitTimeInMs: 100,
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: false });
    await this.consumer.run({
      eachMessage: async ({ message, heartbeat }) => {
        if (!message.value) return;
        let alert: GeoAlert;
        try {
          alert = this.codec.decode(message.value);
        } catch (error) {
          this.logger.warn({ err: error, offset: message.offset }, 'alert record unreadable: not posted');
          return;
        }
        await this.post(alert, heartbeat);
      },
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer.disconnect();
  }

  private async post(alert: GeoAlert, heartbeat: () => Promise<void>): Promise<void> {
    const { target, secret, metrics } = this.options;
    const body = JSON.stringify(slackBody(alert));
    const about = { alertId: alert.alertId, code: alert.code, state: alert.state };
    try {
      const attempts = await deliver(target, body, signatureHeaders(body, secret, Date.now()), {
        sleep: (ms) => this.sleep(ms, heartbeat),
        random: Math.random,
        onRetry: (reason, attempt) => {
          metrics.webhookRetries.inc();
          this.logger.warn({ ...about, reason, attempt }, 'webhook failed: retrying');
        },
      });
      metrics.webhookDeliveries.inc({ outcome: 'delivered' });
      this.logger.info({ ...about, attempts }, 'alert posted to the webhook');
    } catch (error) {
      // Stopping mid-retry: leave the offset, the next start posts it.
      if (this.stopping) throw error;
      metrics.webhookDeliveries.inc({ outcome: 'failed' });
      this.logger.error({ ...about, errorCode: isBanstreamError(error) ? error.code : undefined, reason: (error as Error).message }, 'alert not posted to the webhook');
    }
  }

  /** Backs off in short sleeps with a heartbeat between them, so the group keeps us. */
  private async sleep(ms: number, heartbeat: () => Promise<void>): Promise<void> {
    const until = Date.now() + ms;
    for (let left = ms; left > 0; left = until - Date.now()) {
      if (this.stopping) throw new Error('stopping');
      await new Promise((r) => setTimeout(r, Math.min(left, HEARTBEAT_EVERY_MS)));
      await heartbeat();
    }
  }
}
