import { Allowlist, PolicyBook } from '@banstream/core';
import { Occasional, unwatched } from '@banstream/platform';
import { accessRefusal, CompactedFeed, whenGivenUp, DLQ_REASON, ensureTopicsFromConfig, kafkaFromConfig, kafkaReachable, KeyPartitioner, RenewableProducer, topicFullName } from '@banstream/kafka';
import type { RunServiceDeps, Service } from '@banstream/platform';
import { allowlistEntry, loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { aggregatorEnv, stateDirOf, type AggregatorConfig } from './config.js';
import { BanLedger, Outbox } from '@banstream/engine';
import { DecisionFlusher, SerialPublications } from './kafka/decision-flusher.js';
import { PendingPublications } from './kafka/pending-publications.js';
import { Publisher, type AggregatorTopics, type Refused } from './kafka/publisher.js';
import { aggregatorMetrics, showPendingPublications } from './metrics.js';
import { EventsStage } from './stages/events-stage.js';
import { SubjectsStage } from './stages/subjects-stage.js';
import { Ticker } from './ticker.js';
import type { StageContext } from './stages/context.js';
import { geoAlerting, type GeoAlerting } from './geo.js';

export { aggregatorEnv, stateDirOf, type AggregatorConfig };

/** How far event clocks may disagree with ours; the replay horizon adds it. */
const CLOCK_SKEW_MS = 60_000;

/**
 * The aggregator: reads policies, the allowlist and the bans already decided (to
 * the end, before it counts anything), then counts the events topic in two stages
 * (events-stage.ts, subjects-stage.ts) and publishes counts and bans (ticker.ts).
 */
export function createAggregatorService(deps: RunServiceDeps<AggregatorConfig>): Service {
  const { config, logger, readiness, registry, watchdog } = deps;
  // Without a watchdog (a test building the service in its process), records are only timed.
  const watch = (t: string) => watchdog?.watch(t) ?? unwatched(t, config.AGGREGATOR_RECORD_BUDGET_MS);
  const kafka = kafkaFromConfig(config, logger, 'banstream-aggregator');
  // Kafka refusing this principal (an ACL revoked while running) is no outage to wait out:
  // retrying for ever, or counting on without a consumer, would only look ready.
  let failing = false;
  const refusedByKafka = (error: unknown): boolean => {
    if (accessRefusal(error) === undefined) return false;
    if (failing) return true;
    failing = true;
    // Stopping waits for publications in hand: at most SHUTDOWN_TIMEOUT_MS, then the exit.
    if (deps.fail) deps.fail(error);
    else logger.fatal({ err: error }, (error as Error).message);
    return true;
  };
  /**
   * kafkajs stops a consumer for good after an error it does not retry (a TypeError in its
   * own fetch loop, say): a stage stopped so counts and bans nothing, a notifier posts
   * nothing, while the process looks alive. The process fails instead (exit 1): its supervisor starts a new worker,
   * which rebuilds the windows from Kafka. (The compacted feeds restart themselves.)
   */
  const consumerGivenUp = (what: string, cause: Error): void => {
    if (refusedByKafka(cause) || failing) return;
    failing = true;
    const error = new Error(`the aggregator's ${what} consumer stopped on an error Kafka does not retry: ${cause.message}`, { cause });
    if (deps.fail) deps.fail(error);
    else logger.fatal({ err: error, consumer: what }, error.message);
  };
  const consumer = kafka.consumer.bind(kafka);
  kafka.consumer = (options) => {
    const made = consumer(options);
    // After the port's own listener, which named the refusal in the payload.
    made.on(made.events.CRASH, ({ payload }) => void refusedByKafka(payload.error));
    return made;
  };
  const admin = kafka.admin();
  const catalog = loadSchemaCatalog();
  const metrics = aggregatorMetrics(registry);
  const topic = (name: Parameters<typeof topicFullName>[1]) => topicFullName(config.TOPIC_PREFIX, name);
  const topics: AggregatorTopics = {
    events: topic('events'),
    subjects: topic('aggregator-subjects'),
    counts: topic('counts'),
    bans: topic('bans'),
    dlq: topic('dlq'),
    policies: topic('policies'),
    allowlist: topic('allowlist'),
    alerts: topic('alerts'),
    baselines: topic('aggregator-baselines'),
    history: topic('ban-history'),
  };
  // Hard policies are the enforcer's, checked in Redis.
  const book = new PolicyBook((p) => p.enforcement.type === 'async');
  const ledger = new BanLedger();
  const allowlist = new Allowlist();
  const outbox = new Outbox();
  // Ordered output (a ban, then its tombstone) needs one request in flight.
  const decisions = new RenewableProducer(() => kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: Number.MAX_SAFE_INTEGER }, createPartitioner: KeyPartitioner }));
  const bulk = new RenewableProducer(() => kafka.producer({ idempotent: true, maxInFlightRequests: 5, retry: { retries: Number.MAX_SAFE_INTEGER }, createPartitioner: KeyPartitioner }));
  const instance = `${process.pid}-${Date.now().toString(36)}`;
  const feeds = feedsFor();
  let geo: GeoAlerting | undefined;
  let context: StageContext | undefined;
  let stages: { events: EventsStage; subjects: SubjectsStage } | undefined;
  let ticker: Ticker | undefined;
  let decisionFlusher: DecisionFlusher | undefined;
  let started = false;
  readiness.add('started', () => started);
  readiness.add('kafka access', () => !failing);
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));
  readiness.add('partitions rebuilt', () => stages !== undefined && stages.events.assigned.ready && stages.subjects.assigned.ready);
  // Output under way for longer than the bound holds every partition behind it: not ready, and shown.
  const pending = new PendingPublications();
  readiness.add('output published', () => pending.longestMs(Date.now()) <= config.AGGREGATOR_PUBLISH_STUCK_MS);
  showPendingPublications(metrics, () => pending.longestMs(Date.now()));
  const refusals = new Occasional(10_000);
  const refused = ({ output, refusal, deadLettered }: Refused) => {
    metrics.outputRefused.inc({ output, dead_lettered: String(deadLettered) });
    if (deadLettered) metrics.dlq.inc({ reason: DLQ_REASON.refused });
    const held = refusals.pass(Date.now());
    if (held !== undefined)
      logger.error(
        { output, refusal, deadLettered, alsoRefusedSinceLastLine: held },
        deadLettered ? 'Kafka refused a record: dead-lettered, publishing goes on' : 'Kafka refused a record, and the DLQ refused it too: dropped',
      );
  };

  function feedsFor(): CompactedFeed[] {
    const policyCodec = catalog.codec(SCHEMA_NAMES.policy);
    const allowCodec = catalog.codec(SCHEMA_NAMES.allowEntry);
    const banCodec = catalog.codec(SCHEMA_NAMES.ban);
    const feed = (t: string, name: string, onRecord: (key: string, value: Buffer | null) => void) =>
      // No DLQ from here: the control service dead-letters the records of these topics (see CompactedFeed).
      new CompactedFeed({
        kafka,
        admin,
        topic: t,
        groupId: `${config.AGGREGATOR_GROUP_ID}.${name}.${instance}`,
        logger,
        onRecord: (r) => onRecord(r.key, r.value),
        feed: name,
        registry,
        watch: watch(t),
      });
    return [
      feed(topics.policies, 'policies', (key, value) => {
        const change = book.apply(key, value === null ? null : policyCodec.decode(value));
        if (change.kind === 'rejected') {
          metrics.policyRejected.inc();
          logger.warn({ policy: change.id, reason: change.reason }, 'policy rejected: not applied');
        } else logger.info(change, 'policy change');
        metrics.policies.set(book.policies.length);
      }),
      feed(topics.allowlist, 'allowlist', (key, value) => {
        if (value === null) allowlist.remove(key);
        else allowlist.add(allowlistEntry(allowCodec.decode(value)));
      }),
      feed(topics.bans, 'bans', (key, value) => ledger.observe(key, value === null ? null : banCodec.decode(value))),
    ];
  }

  return {
    async start() {
      await admin.connect();
      const ensured = await ensureTopicsFromConfig(admin, config);
      if (ensured) logger.info({ created: ensured.created }, 'topics ensured');
      const metadata = await admin.fetchTopicMetadata({ topics: [topics.events, topics.subjects] });
      const partitionsOf = (name: string) => metadata.topics.find((t) => t.name === name)?.partitions.length ?? 0;
      if (config.GEO_ALERT_ENABLED) geo = geoAlerting({ config, kafka, admin, logger, metrics, registry, topics, catalog, instance });
      if (geo?.notifier) whenGivenUp(geo.notifier.consumer, (error) => consumerGivenUp('webhook notifier', error));
      await Promise.all([...feeds.map((f) => f.start()), geo?.baselines.start(), geo?.notifier?.start()]);
      logger.info({ policies: book.policies.map((p) => p.id), allowlist: allowlist.size, bans: ledger.size, baselines: geo?.baselines.size }, 'policies, allowlist, bans and baselines read');
      await Promise.all([decisions.connect(), bulk.connect()]);
      const publisher = new Publisher(bulk, decisions, topics, catalog, refused);
      const flusher = (decisionFlusher = new DecisionFlusher({
        outbox,
        pending,
        publisher,
        metrics,
        onRetry(error, attempt) {
          if (refusedByKafka(error)) return;
          if (attempt === 1 || attempt % 20 === 0) logger.warn({ err: error, attempt }, 'publishing counts and bans failed; retrying');
        },
      }));
      // The repartition and dead letters of every partition share the bulk producer: one publication at a time.
      const bulkPublications = new SerialPublications({ stopped: () => flusher.isStopped, pending });
      const ctx: StageContext = (context = {
        kafka,
        admin,
        logger,
        config,
        catalog,
        topics,
        metrics,
        book,
        outbox,
        publisher,
        partitions: { events: partitionsOf(topics.events), subjects: partitionsOf(topics.subjects) },
        decider: { ledger, allowlist, nowMs: Date.now },
        ...(geo ? { geo: geo.context } : {}),
        horizonMs: () => Math.max(book.longestWindowMs, config.AGGREGATOR_GEO_WINDOW_MS) + config.AGGREGATOR_GRACE_MS + CLOCK_SKEW_MS,
        flushDecisions: () => flusher.flush(),
        watch,
        reloadTraps: () => watchdog?.reload(),
        publishUntilDone: (what, publish) =>
          bulkPublications.run(publish, (error, attempt) => {
            if (refusedByKafka(error)) return;
            if (attempt === 1 || attempt % 20 === 0) logger.warn({ err: error, attempt }, `publishing ${what} failed; retrying`);
          }),
      });
      stages = { events: new EventsStage(ctx), subjects: new SubjectsStage(ctx) };
      for (const [name, stage] of Object.entries(stages)) whenGivenUp(stage.consumer, (error) => consumerGivenUp(name, error));
      await Promise.all([stages.events.connect(), stages.subjects.connect()]);
      // The workers of a supervisor join the groups at once: one rebalance, not one per worker.
      await deps.startTogether?.();
      await Promise.all([stages.events.start(), stages.subjects.start()]);
      ticker = new Ticker(ctx, stages, ledger, allowlist);
      ticker.start(config.AGGREGATOR_TICK_MS);
      started = true;
    },
    async stop() {
      started = false;
      ticker?.stop();
      if (stages) await Promise.all([stages.events.stop(), stages.subjects.stop()]);
      if (stages && context) {
        // Everything learned since the last write, so a restart goes on from here.
        const now = Date.now();
        for (const s of stages.subjects.assigned.states()) s.watch?.flush(now, outbox, true);
        // One last attempt: with Kafka away, shutting down must not wait for it.
        decisionFlusher?.stop();
        await context.flushDecisions();
      }
      await Promise.all([...feeds.map((f) => f.stop()), geo?.baselines.stop(), geo?.notifier?.stop()]);
      await Promise.all([decisions.disconnect(), bulk.disconnect()]);
      await admin.disconnect();
    },
  };
}
