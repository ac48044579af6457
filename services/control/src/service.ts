import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Service, ServiceDeps } from '@banstream/platform';
import { CompactedFeed, deadLetterSink, ensureTopicsFromConfig, kafkaFromConfig, kafkaReachable, KeyPartitioner, topicFullName } from '@banstream/kafka';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { BanstreamError, parseDuration } from '@banstream/core';
import { TokenBook } from './auth/tokens.js';
import { BacktestJobs } from './backtest/jobs.js';
import { controlEnv, type ControlConfig } from './config.js';
import { parseAllowedNetworks } from './feeds/address-guard.js';
import { FeedRefresher } from './feeds/refresher.js';
import type { GuardRails } from './guards/index.js';
import { adminApi } from './http/admin-api.js';
import { expiredManualBans } from './routes/bans.js';
import { ChangeWriter, type ControlTopics } from './state/change-writer.js';
import { PartitionScanner } from './state/partition-scan.js';
import { ProducerSlot } from './state/producer-slot.js';
import { ControlState } from './state/control-state.js';
import { controlMetrics } from './metrics.js';
import { loadConsoleAssets } from './console/assets.js';
import { createConsole } from './console/console.js';

export { controlEnv, type ControlConfig };

const SYSTEM_ACTOR = 'banstream-control';

/**
 * The control plane: reads policies, bans, allowlist and alerts from their topics
 * (the source of truth) and serves the admin API (http/admin-api.ts); writes every
 * change with its audit record (state/change-writer.ts); lifts manual bans at their
 * expiry (the aggregator lifts only its own); runs backtests (backtest/).
 */
export function createControlService(deps: ServiceDeps<ControlConfig>): Service {
  const { config, logger, readiness, http } = deps;
  const tokens = loadTokens(config);
  const kafka = kafkaFromConfig(config, logger, 'banstream-control');
  const admin = kafka.admin();
  const catalog = loadSchemaCatalog();
  const topic = (name: Parameters<typeof topicFullName>[1]) => topicFullName(config.TOPIC_PREFIX, name);
  const topics: ControlTopics & { subjects: string } = {
    policies: topic('policies'),
    bans: topic('bans'),
    allowlist: topic('allowlist'),
    alerts: topic('alerts'),
    audit: topic('audit'),
    events: topic('events'),
    feeds: topic('feeds'),
    subjects: topic('aggregator-subjects'),
    history: topic('ban-history'),
  };
  const countsTopic = topic('counts');
  const clock = Date.now;
  const state = new ControlState(config.CONTROL_ALERTS_KEPT);
  const producers = new ProducerSlot(() => kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: Number.MAX_SAFE_INTEGER }, createPartitioner: KeyPartitioner }));
  const metrics = controlMetrics(deps.registry);
  const writer = new ChangeWriter(producers, topics, catalog, state, clock, 3 * config.KAFKA_REQUEST_TIMEOUT_MS, (action) => metrics.changes.inc({ action }));
  const jobs = new BacktestJobs({
    kafka,
    admin,
    logger: logger.child({ component: 'backtest' }),
    catalog,
    topics,
    state,
    clock,
    graceMs: config.AGGREGATOR_GRACE_MS,
    maxFutureMs: config.AGGREGATOR_MAX_FUTURE_MS,
    onFinished: (s) => metrics.backtests.inc({ state: s }),
  });
  const instance = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const codecs = {
    policy: catalog.codec(SCHEMA_NAMES.policy),
    ban: catalog.codec(SCHEMA_NAMES.ban),
    allow: catalog.codec(SCHEMA_NAMES.allowEntry),
    alert: catalog.codec(SCHEMA_NAMES.geoAlert),
    feed: catalog.codec(SCHEMA_NAMES.feed),
    count: catalog.codec(SCHEMA_NAMES.windowCount),
  };
  const webConsole = config.CONTROL_CONSOLE
    ? createConsole({
        tokens,
        state,
        assets: loadConsoleAssets(),
        sessionTtlMs: parseDuration(config.CONTROL_CONSOLE_SESSION_TTL),
        maxSessions: config.CONTROL_CONSOLE_MAX_SESSIONS,
        maxStreams: config.CONTROL_CONSOLE_MAX_STREAMS,
        tickMs: config.CONTROL_CONSOLE_TICK_MS,
        metricsUrls: config.CONTROL_CONSOLE_METRICS_URLS?.split(',') ?? [],
        rateLimit: config.CONTROL_RATE_LIMIT,
        eventsEndOffset: async () => (await admin.fetchTopicOffsets(topics.events)).reduce((sum, p) => sum + Number(p.high), 0),
        clock,
        logger: logger.child({ component: 'console' }),
      })
    : undefined;
  // The one writer of these topics' bad records to the DLQ (CompactedFeed says why).
  const deadLetters = deadLetterSink({ topic: topic('dlq'), catalog, producer: () => producers.current(), failed: (p) => producers.retire(p) });
  const feed = (name: string, t: string, apply: (key: string, value: Buffer | null, timestamp: number) => void) =>
    new CompactedFeed({
      kafka,
      admin,
      topic: t,
      groupId: `banstream-control.${name}.${instance}`,
      logger,
      onRecord: (r) => apply(r.key, r.value, r.timestamp),
      feed: name,
      registry: deps.registry,
      deadLetters,
    });
  const feeds = [
    feed('policies', topics.policies, (k, v) => state.applyPolicy(k, v && codecs.policy.decode(v))),
    feed('bans', topics.bans, (k, v, at) => {
      state.applyBan(k, v && codecs.ban.decode(v));
      webConsole?.overview.onBanRecord(v === null, at);
    }),
    feed('allowlist', topics.allowlist, (k, v) => state.applyAllow(k, v && codecs.allow.decode(v))),
    feed('alerts', topics.alerts, (_k, v) => v && state.applyAlert(codecs.alert.decode(v))),
    feed('feeds', topics.feeds, (k, v) => state.applyFeed(k, v && codecs.feed.decode(v))),
  ];
  // The console's "nearest their threshold": read in the background, so it never holds the API's readiness back.
  const countsFeed = webConsole && feed('counts', countsTopic, (k, v) => webConsole.hot.apply(k, v && codecs.count.decode(v)));
  const guards = guardRails(config);
  const feedAddresses = { allowed: allowedFeedNetworks(config.CONTROL_FEED_ALLOWED_NETWORKS) };
  const refresher = new FeedRefresher(state, writer, clock, {
    timeoutMs: config.CONTROL_FEED_TIMEOUT_MS,
    maxBytes: config.CONTROL_FEED_MAX_BYTES,
    fileDir: config.CONTROL_FEED_FILE_DIR,
    addresses: feedAddresses,
    maxLines: config.CONTROL_FEED_MAX_LINES,
    maxInvalidShare: config.CONTROL_FEED_MAX_INVALID_PERCENT / 100,
    maxLiftShare: config.CONTROL_FEED_MAX_LIFT_PERCENT / 100,
    minPrefix: guards.minPrefix,
    onRefreshed: (outcome) => metrics.feedRefreshes.inc({ outcome }),
  });
  let started = false;
  let sweep: NodeJS.Timeout | undefined;
  readiness.add('topics read', () => started);
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));
  void http.register(adminApi, {
    scanner: new PartitionScanner(kafka, admin, `banstream-control.query.${instance}.`, 2),
    topics,
    historyCodec: catalog.codec(SCHEMA_NAMES.banHistory),
    auditCodec: catalog.codec(SCHEMA_NAMES.auditRecord),
    bounds: { maxScanned: config.CONTROL_QUERY_MAX_SCANNED, budgetMs: config.CONTROL_QUERY_BUDGET_MS },
    tokens,
    state,
    writer,
    jobs,
    logger,
    clock,
    rateLimit: config.CONTROL_RATE_LIMIT,
    guards,
    feeds: refresher,
    feedFileDir: config.CONTROL_FEED_FILE_DIR,
    ready: () => started,
    onDenied: (status) => metrics.denied.inc({ status: String(status) }),
    ...(webConsole ? { sessions: webConsole.sessionAuth } : {}),
  });
  webConsole?.register(http);
  if (tokens.size === 0) logger.warn('no API tokens configured (CONTROL_TOKENS or CONTROL_TOKENS_FILE): every API request will be refused with 401');

  async function liftExpiredManualBans(): Promise<void> {
    for (const ban of expiredManualBans(state, clock())) {
      await writer.serial(() => writer.write({ kind: 'ban', key: ban.subject, value: null, before: ban }, { actor: SYSTEM_ACTOR, requestId: null, expiry: true }));
    }
  }

  /** Starts the refresh of each feed due; a refused one is recorded on the feed (and audited), a failed one logged and retried at the next check. */
  function refreshDueFeeds(): void {
    for (const name of refresher.due(clock())) {
      void refresher.refresh(name, { actor: SYSTEM_ACTOR, requestId: null }).then(
        (outcome) => {
          if (!outcome.ok) logger.warn({ feed: name, code: outcome.code, kept: outcome.kept }, `feed refresh refused: ${outcome.error}`);
        },
        (error: unknown) => {
          logger.warn({ err: error, feed: name }, 'feed refresh failed; retried at the next check');
        },
      );
    }
  }

  return {
    async start() {
      await admin.connect();
      await ensureTopicsFromConfig(admin, config);
      await Promise.all([producers.current(), ...feeds.map((f) => f.start())]);
      started = true;
      void countsFeed?.start().catch((error: unknown) => logger.warn({ err: error }, 'console: reading the counts topic failed; the overview shows no subjects near their threshold'));
      logger.info({ policies: state.policies.size, bans: state.bans.size, allowlist: state.allowlist.size, feeds: state.feeds.size, tokens: tokens.size }, 'topics read; API open');
      sweep = setInterval(() => {
        void liftExpiredManualBans().catch((error: unknown) => logger.warn({ err: error }, 'lifting expired manual bans failed; retried'));
        refreshDueFeeds();
      }, config.CONTROL_BAN_SWEEP_MS);
      sweep.unref();
    },
    async stop() {
      started = false;
      clearInterval(sweep);
      webConsole?.stop();
      jobs.stopAll();
      await countsFeed?.stop();
      await Promise.all(feeds.map((f) => f.stop()));
      await producers.close();
      await admin.disconnect();
    },
  };
}

function guardRails(config: ControlConfig): GuardRails {
  return {
    minPrefix: { v4: config.CONTROL_MIN_PREFIX_V4, v6: config.CONTROL_MIN_PREFIX_V6 },
    maxBan: { text: config.CONTROL_MAX_BAN_DURATION, ms: parseDuration(config.CONTROL_MAX_BAN_DURATION) },
  };
}

/** Token hashes from CONTROL_TOKENS and CONTROL_TOKENS_FILE; a bad entry stops the service (exit 78 through runService). */
function loadTokens(config: ControlConfig): TokenBook {
  let text = config.CONTROL_TOKENS ?? '';
  if (config.CONTROL_TOKENS_FILE !== undefined) {
    try {
      text += `\n${readFileSync(config.CONTROL_TOKENS_FILE, 'utf8')}`;
    } catch (cause) {
      throw new BanstreamError('CONFIG_INVALID', `CONTROL_TOKENS_FILE: cannot read ${config.CONTROL_TOKENS_FILE}: ${(cause as Error).message}`, { cause });
    }
  }
  return new TokenBook(text, config.CONTROL_TOKENS_FILE ? 'CONTROL_TOKENS / CONTROL_TOKENS_FILE' : 'CONTROL_TOKENS');
}

/** CONTROL_FEED_ALLOWED_NETWORKS, or the configuration error naming it and the entry that is not a network. */
function allowedFeedNetworks(list: string) {
  try {
    return parseAllowedNetworks(list);
  } catch (cause) {
    throw new BanstreamError('CONFIG_INVALID', `CONTROL_FEED_ALLOWED_NETWORKS: ${(cause as Error).message}`, { cause });
  }
}
