import type { Admin, Kafka } from '@banstream/kafka';
import { checkTimeZone, GeoSettings, parseGeoOverrides, parseGeoTimeZones, type DetectorOptions } from '@banstream/core';
import type { Logger, Registry } from '@banstream/platform';
import type { SchemaCatalog } from '@banstream/schemas';
import type { AggregatorConfig } from './config.js';
import { BaselineFeed } from './kafka/baseline-feed.js';
import type { AggregatorTopics } from './kafka/publisher.js';
import type { AggregatorMetrics } from './metrics.js';
import type { GeoContext } from './stages/context.js';
import { WebhookNotifier } from './webhook/notifier.js';

export interface GeoAlerting {
  context: GeoContext;
  baselines: BaselineFeed;
  /** Only when GEO_ALERT_WEBHOOK_URL is set. */
  notifier: WebhookNotifier | undefined;
}

interface GeoDeps {
  config: AggregatorConfig;
  kafka: Kafka;
  admin: Admin;
  logger: Logger;
  metrics: AggregatorMetrics;
  /** Where the baselines feed counts its skipped records and restarts. */
  registry: Registry;
  topics: AggregatorTopics;
  catalog: SchemaCatalog;
  /** Unique per process: the baselines feed reads every record in a group of its own. */
  instance: string;
}

/**
 * Geographic alerting's parts: per-code settings from the environment (a bad time
 * zone fails the start with CONFIG_INVALID), the baselines topic every instance
 * reads, and the webhook notifier.
 */
export function geoAlerting({ config, kafka, admin, logger, metrics, registry, topics, catalog, instance }: GeoDeps): GeoAlerting {
  const settings = new GeoSettings(
    { ratio: config.GEO_ALERT_RATIO, z: config.GEO_ALERT_Z, minRate: config.GEO_ALERT_MIN_RATE },
    parseGeoOverrides(config.GEO_ALERT_OVERRIDES),
    parseGeoTimeZones(config.GEO_TIME_ZONES),
    checkTimeZone(config.GEO_DEFAULT_TIME_ZONE),
  );
  const baselines = new BaselineFeed({ kafka, admin, logger, registry, catalog, topic: topics.baselines, groupId: `${config.AGGREGATOR_GROUP_ID}.baselines.${instance}` });
  const url = config.GEO_ALERT_WEBHOOK_URL;
  const notifier =
    url === undefined
      ? undefined
      : new WebhookNotifier({
          kafka,
          logger,
          catalog,
          metrics,
          topic: topics.alerts,
          groupId: `${config.AGGREGATOR_GROUP_ID}.alerts-webhook`,
          sessionTimeoutMs: config.AGGREGATOR_SESSION_TIMEOUT_MS,
          secret: config.GEO_ALERT_WEBHOOK_SECRET,
          target: { url, timeoutMs: config.GEO_ALERT_WEBHOOK_TIMEOUT_MS, retries: config.GEO_ALERT_WEBHOOK_RETRIES, backoffMs: config.GEO_ALERT_WEBHOOK_BACKOFF_MS },
        });
  const optionsFor = (code: string): DetectorOptions => ({
    windowMs: config.AGGREGATOR_GEO_WINDOW_MS,
    lagMs: config.AGGREGATOR_GRACE_MS,
    timeZone: settings.timeZoneFor(code),
    thresholds: settings.thresholdsFor(code),
    warmupSamples: config.GEO_ALERT_WARMUP_SAMPLES,
    alpha: config.GEO_BASELINE_ALPHA,
    resolveMs: config.GEO_ALERT_RESOLVE_MS,
    cooldownMs: config.GEO_ALERT_COOLDOWN_MS,
  });
  const context: GeoContext = {
    optionsFor,
    restore: (subject) => baselines.restore(subject),
    prepare: () => baselines.catchUp(),
    record(report) {
      if (report.learned > 0) metrics.geoLearned.inc(report.learned);
      if (report.restored > 0) metrics.geoRestored.inc(report.restored);
      for (const { scope, code, verdict } of report.verdicts) {
        logger.warn(
          { scope, code, state: verdict.state, firedAt: verdict.firedAt, at: verdict.at, rate: verdict.rate, baselineRate: verdict.baselineRate, ratio: verdict.ratio, zScore: verdict.zScore },
          'geographic alert',
        );
      }
    },
  };
  return { context, baselines, notifier };
}
