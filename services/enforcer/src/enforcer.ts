import { CompactedFeed, topicFullName, type Admin, type Kafka } from '@banstream/kafka';
import { Allowlist, attributesFromRequest, PolicyBook, resolveVerdict, type Candidate, type RequestInput } from '@banstream/core';
import { Occasional, type Logger, type Registry } from '@banstream/platform';
import { allowlistEntry, banWithoutEvidence, loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { BanCache } from './cache/ban-cache.js';
import { CountCache } from './cache/count-cache.js';
import { decideLocally, type Decision, type HardCheck, type LocalDecision, type LocalState, type Quota } from './decide.js';

export type { Decision } from './decide.js';
import type { HardLimiter as RedisHardLimiter } from './hard/index.js';
import { CONTEXT_SCOPES, scopeBit, scopesOfPolicy, type ContextNeeds, type ScopeSet } from './context-scopes.js';
import { enforcerMetrics, type EnforcerMetrics } from './metrics.js';
import { WarmUp, type WarmUpMode } from './warm-up.js';

/** Checks hard policies in Redis: createHardLimiter (hard/). */
export type HardLimiter = Pick<RedisHardLimiter, 'check' | 'close'>;

export interface EnforcerOptions {
  kafka: Kafka;
  admin: Admin;
  topicPrefix: string;
  logger: Logger;
  registry: Registry;
  /** Unique per instance: every enforcer reads every record of the compacted topics. */
  instanceId: string;
  hardLimiter?: HardLimiter;
  clock?: () => number;
  /** Uniform draws in [0, 1) for the throttle share. */
  random?: () => number;
  /** Until the caches have caught up (warm-up.ts): what decides a request no cached policy applies to; default closed. */
  warmUpMode?: WarmUpMode;
  /** Longest a check waits for the policies and the allowlist before deciding without them; default 3000 ms. */
  warmUpWaitMs?: number;
  /** The most bans held before new ones are refused (ENFORCER_MAX_BANS); default DEFAULT_MAX_BANS (ban-cache.ts). */
  maxBans?: number;
  /** Entries the `local` failure mode keeps while warming; default 100000. */
  warmUpLocalMaxEntries?: number;
  /**
   * A ban or an enabled policy that names context scopes (country, region, asn, route)
   * came: a caller that cannot supply them (GET /v1/auth) can report that it cannot apply it.
   */
  onContextNeed?: (need: ContextNeed) => void;
}

/** What onContextNeed reports: the scopes named, and by what (a ban names the policy that made it). */
export interface ContextNeed {
  scopes: ScopeSet;
  kind: 'ban' | 'policy';
  policyId: string;
}

/** The answer to "may this request pass?". */

export interface Enforcer {
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * True once every cache has caught up with its topic, and false again while a feed's
   * consumer is being started again after Kafka's client gave up on it. Until the first
   * catch-up check() waits (a bounded time) for the policies and the allowlist, and
   * decides by failure modes with the source `warming` rather than allow for lack of
   * data (warm-up.ts); afterwards it answers from the caches.
   */
  readonly ready: boolean;
  check(request: Omit<RequestInput, 'timestamp'>): Promise<Decision>;
  readonly bans: BanCache;
  /** Drops expired bans, stale counts and allowlist entries; call periodically. */
  purge(): void;
  /** Per context scope, the bans and enabled policies held that name it. */
  contextNeeds(): ContextNeeds;
}

/**
 * The enforcer as a library: local caches of bans, counts, policies and the
 * allowlist, fed by the compacted topics (each read from the beginning, then
 * tailed), and the hard-limit check. check() answers from memory, plus one Redis
 * round trip when a hard policy applies; before the caches have caught up, by the
 * failure modes (warm-up.ts).
 */
export function createEnforcer(options: EnforcerOptions): Enforcer {
  const { kafka, admin, logger, registry } = options;
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const metrics = enforcerMetrics(registry);
  const catalog = loadSchemaCatalog();
  const onContextNeed = options.onContextNeed;
  const fullLog = new Occasional(FULL_LOG_EVERY_MS);
  const bans: BanCache = new BanCache({
    onContextBan: onContextNeed && ((scopes, ban) => onContextNeed({ scopes, kind: 'ban', policyId: ban.policyId })),
    maxBans: options.maxBans,
    onRefused: (subject, ban) => {
      metrics.bansRefused.inc();
      const heldBack = fullLog.pass(clock());
      if (heldBack === undefined) return;
      metrics.cacheEntries.set({ cache: 'bans' }, bans.size);
      logger.warn(
        { held: bans.size, maxBans: bans.maxBans, refused: bans.refused, refusedUnlogged: heldBack, subject, policyId: ban.policyId },
        'ban cache full (ENFORCER_MAX_BANS): a new ban was refused; bans held stay, manual bans are still taken',
      );
    },
  });
  metrics.bansMax.set(bans.maxBans);
  const state: LocalState = { bans, counts: new CountCache(), allowlist: new Allowlist(), policies: new PolicyBook() };
  const topic = (name: 'bans' | 'counts' | 'policies' | 'allowlist') => topicFullName(options.topicPrefix, name);
  const codecs = {
    // Every enforcer holds every ban: not its evidence, which only the control API shows.
    ban: banWithoutEvidence(catalog),
    count: catalog.codec(SCHEMA_NAMES.windowCount),
    policy: catalog.codec(SCHEMA_NAMES.policy),
    allow: catalog.codec(SCHEMA_NAMES.allowEntry),
  };
  const feed = (name: 'bans' | 'counts' | 'policies' | 'allowlist', apply: (key: string, value: Buffer | null) => void) =>
    new CompactedFeed({
      kafka,
      admin,
      topic: topic(name),
      groupId: `banstream-enforcer.${name}.${options.instanceId}`,
      logger,
      feed: name,
      registry,
      onRecord: (r) => {
        apply(r.key, r.value);
        metrics.feedLag.observe({ feed: name }, Math.max(0, clock() - r.timestamp) / 1000);
      },
    });
  const feeds = [
    feed('policies', (key, value) => {
      const change = state.policies.apply(key, value === null ? null : codecs.policy.decode(value));
      if (change.kind === 'rejected') {
        metrics.rejectedPolicies.inc();
        logger.warn({ policy: change.id, reason: change.reason }, 'policy rejected: not applied');
      }
      const policy = change.kind === 'applied' ? state.policies.get(change.id) : undefined;
      const scopes = policy?.enabled ? scopesOfPolicy(policy) : 0;
      if (scopes !== 0) onContextNeed?.({ scopes, kind: 'policy', policyId: change.id });
    }),
    feed('allowlist', (key, value) => {
      if (value === null) state.allowlist.remove(key);
      else state.allowlist.add(allowlistEntry(codecs.allow.decode(value)));
    }),
    feed('bans', (key, value) => state.bans.observe(key, value === null ? null : codecs.ban.decode(value))),
    feed('counts', (key, value) => state.counts.observe(key, value === null ? null : codecs.count.decode(value))),
  ];
  let ready = false;
  /** Caught up once: what the caches hold stays the best answer while stopping too, unlike `ready`. */
  let warm = false;
  const warmUp = new WarmUp(options.warmUpMode ?? 'closed', options.warmUpLocalMaxEntries ?? 100_000);
  const small = deferred();
  let smallLoaded = false;
  let smallWait: Promise<void> | undefined;
  /** Resolves once the policies and the allowlist are read, or the wait is over: then checks decide with what there is. */
  const untilPoliciesRead = (): Promise<void> | undefined => {
    if (smallLoaded) return undefined;
    smallWait ??= new Promise<void>((resolve) => {
      setTimeout(resolve, options.warmUpWaitMs ?? 3_000).unref();
      void small.promise.then(resolve);
    });
    return smallWait;
  };
  const hardLimits = (local: LocalDecision, now: number): Promise<Candidate[]> => {
    if (!options.hardLimiter) throw new Error('a hard policy applies but this enforcer has no hard limiter (Redis) configured');
    return options.hardLimiter.check(local.hard, now);
  };
  const verdict = (local: LocalDecision, hard: readonly Candidate[] | undefined): Decision => {
    const candidates = hard ? local.candidates.concat(hard) : local.candidates;
    const quota = hard ? tightest(local.quota, hard, local.hard) : local.quota;
    return decided(metrics, resolveVerdict(local.allowlisted, candidates), local.allowlisted === undefined ? quota : undefined);
  };
  /** check() until every cache has caught up once: off the hot path, which tests one boolean for it. */
  const checkWarming = async (request: Parameters<Enforcer['check']>[0]): Promise<Decision> => {
    await untilPoliciesRead();
    const now = clock();
    const attrs = attributesFromRequest(request, now);
    const local = decideLocally(state, attrs, now, random);
    if (!local.allowlisted) warmUp.decide(local, state.policies, attrs, now);
    const hard = local.hard.length > 0 ? await hardLimits(local, now) : undefined;
    return warmUp.mark(verdict(local, hard));
  };

  return {
    get ready() {
      // A feed whose consumer is being started again (CompactedFeed) does not move: its cache is the last state read.
      return ready && !feeds.some((f) => f.down);
    },
    bans: state.bans,
    async start() {
      const started = feeds.map((f) => f.start());
      const all = Promise.all(started); // every rejection handled, whichever comes first
      // The policies and the allowlist are small: read first, they let warming checks decide (warm-up.ts).
      await Promise.race([Promise.all(started.slice(0, 2)), all]);
      smallLoaded = true;
      small.resolve();
      await all;
      warm = true;
      ready = true;
      logger.info({ bans: state.bans.size, counts: state.counts.size, policies: state.policies.policies.length, allowlist: state.allowlist.size }, 'caches caught up');
    },
    async stop() {
      ready = false;
      await Promise.all(feeds.map((f) => f.stop()));
      options.hardLimiter?.close();
    },
    purge() {
      const now = clock();
      state.bans.purgeExpired(now);
      state.counts.purgeStale(now);
      state.allowlist.purgeExpired(now);
      metrics.cacheEntries.set({ cache: 'bans' }, state.bans.size);
      metrics.cacheEntries.set({ cache: 'counts' }, state.counts.size);
      metrics.cacheEntries.set({ cache: 'allowlist' }, state.allowlist.size);
      metrics.cacheEntries.set({ cache: 'policies' }, state.policies.policies.length);
    },
    contextNeeds() {
      const enabled = state.policies.policies.map(scopesOfPolicy);
      const needs = {} as ContextNeeds;
      for (const scope of CONTEXT_SCOPES) {
        const bit = scopeBit(scope);
        needs[scope] = { bans: state.bans.bansNaming(scope), policies: enabled.filter((s) => (s & bit) !== 0).length };
      }
      return needs;
    },
    async check(request) {
      if (!warm) return checkWarming(request);
      const now = clock();
      const attrs = attributesFromRequest(request, now);
      const local = decideLocally(state, attrs, now, random);
      return verdict(local, local.hard.length > 0 ? await hardLimits(local, now) : undefined);
    },
  };
}

/** A full ban cache logs one line per this period (an attacker may cause many refusals), with how many it left out. */
const FULL_LOG_EVERY_MS = 10_000;

/** Counts the decision, and adds the quota for the RateLimit headers (none for an allowlisted request). */
function decided(metrics: EnforcerMetrics, decision: Decision, quota: Quota | undefined): Decision {
  metrics.decisions.inc(decision.source, decision.allowed ? 'allow' : 'deny');
  for (const c of decision.previewDenies) metrics.previewDenies.inc({ policy: c.policyId });
  // Set on the fresh verdict rather than copied into a spread (slow in Node 20, see attributesFromRequest).
  if (quota !== undefined) decision.quota = quota;
  return decision;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function tightest(quota: Quota | undefined, results: readonly Candidate[], items: readonly HardCheck[]): Quota | undefined {
  let best = quota;
  results.forEach((c, i) => {
    if (c.limit === undefined || c.remaining === undefined) return;
    if (!best || c.remaining < best.remaining) {
      best = { policyId: c.policyId, limit: c.limit, remaining: c.remaining, windowSeconds: Math.round(items[i]!.policy.threshold.intervalMs / 1000) };
    }
  });
  return best;
}
