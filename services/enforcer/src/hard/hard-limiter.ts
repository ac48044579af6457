import { performance } from 'node:perf_hooks';
import type { Candidate } from '@banstream/core';
import { checkedCost, isBanstreamError } from '@banstream/core';
import { withDeadline, type Logger, type RedisClient, type Registry } from '@banstream/platform';
import { CircuitBreaker, type BreakerOptions, type BreakerState } from './breaker.js';
import { failureModeCandidate, limitCandidate } from './candidates.js';
import { Coalescer } from './coalescer.js';
import { ALGORITHM_TAG, hardLimitKey } from './keys.js';
import { limitSpecOf, type LimitSpec } from './limit-spec.js';
import { LocalLimiter } from './local-limiter.js';
import { BREAKER_STATE_VALUE, hardLimitMetrics } from './metrics.js';
import { defineHardLimitScript, loadOnEveryNode, type ScriptReply } from './scripts.js';
import { hashSlot } from './slot.js';
import type { HardLimitPolicy, HardLimiter } from './types.js';

export interface HardLimiterOptions {
  /**
   * The caller's client (createRedis / createRedisClient: no offline queue,
   * auto-pipelining); the limiter registers its scripts on it. A Cluster client gets
   * one script call per hash slot.
   */
  redis: RedisClient;
  logger: Logger;
  registry: Registry;
  /** Longest wait for one script call before the failure modes decide (default 5 ms). */
  timeoutMs?: number;
  /** Start of every key (default `bs:`). */
  keyPrefix?: string;
  breaker?: BreakerOptions;
  /** Wall clock for the breaker's cool-down (default Date.now). */
  clock?: () => number;
  /** Most checks coalesced into one script call (default 128); 1 turns coalescing off. */
  maxBatch?: number;
  /** Bound on the (policy, subject) windows the `local` failure mode keeps (default 100,000). */
  localMaxEntries?: number;
}

/** One request's checks in flight: filled in as their batches answer. */
interface PendingRequest {
  readonly results: Candidate[];
  left: number;
  readonly nowMs: number;
  readonly resolve: (results: Candidate[]) => void;
}

interface PendingCheck {
  readonly request: PendingRequest;
  readonly index: number;
  readonly policy: HardLimitPolicy;
  readonly spec: LimitSpec;
  readonly key: string;
  readonly cost: number;
}

/**
 * Hard limits decided atomically in Redis, one round trip per request: the checks
 * that arrive in one event-loop turn are coalesced into one script call (one per
 * hash slot in a Cluster). When a call errors, exceeds `timeoutMs`, or the circuit
 * breaker is open, each policy's failure mode decides.
 */
export function createHardLimiter(options: HardLimiterOptions): HardLimiter {
  const log = options.logger.child({ component: 'hard-limits' });
  const metrics = hardLimitMetrics(options.registry);
  const timeoutMs = options.timeoutMs ?? 5;
  const keyPrefix = options.keyPrefix ?? 'bs:';
  const runScript = defineHardLimitScript(options.redis);
  const local = new LocalLimiter(options.localMaxEntries ?? 100_000);
  const clock = options.clock ?? Date.now;
  const breaker = new CircuitBreaker(options.breaker ?? {}, clock, breakerMoved);
  const closedRetryAfterSeconds = Math.max(1, Math.ceil(breaker.coolDownMs / 1000));
  const perSlot = options.redis.isCluster;
  const coalescer = new Coalescer<PendingCheck>({
    maxBatch: options.maxBatch ?? 128,
    groupOf: perSlot ? (c) => hashSlot(c.key) : () => 0,
    send,
  });
  let closed = false;
  let lastScriptErrorLog = -Infinity;
  metrics.breakerState.set(BREAKER_STATE_VALUE.closed);

  function breakerMoved(to: BreakerState, from: BreakerState): void {
    metrics.breakerState.set(BREAKER_STATE_VALUE[to]);
    if (to === 'open') {
      metrics.breakerOpened.inc();
      if (from === 'closed') log.warn({ coolDownMs: breaker.coolDownMs }, 'redis hard-limit checks failing: failure modes decide until a probe succeeds');
    } else if (to === 'closed') {
      log.info('redis hard-limit checks answering again');
    }
  }

  function finish(check: PendingCheck, candidate: Candidate): void {
    const { request } = check;
    request.results[check.index] = candidate;
    if (--request.left === 0) request.resolve(request.results);
  }

  function failureDecision(policy: HardLimitPolicy, spec: LimitSpec, key: string, nowMs: number, cost: number): Candidate {
    const mode = spec.failureMode;
    let candidate: Candidate;
    if (mode === 'local') {
      const reply = local.hit(key, spec.local.limit, spec.local.intervalMs, nowMs, cost);
      metrics.localEntries.set(local.size);
      candidate = limitCandidate(policy, spec.local, reply, 'fail-mode');
    } else {
      candidate = failureModeCandidate(policy, spec, mode, closedRetryAfterSeconds);
    }
    metrics.failMode.inc({ policy: policy.id, mode, result: candidate.deny ? 'deny' : 'allow' });
    return candidate;
  }

  function failBatch(batch: readonly PendingCheck[]): void {
    for (const c of batch) finish(c, failureDecision(c.policy, c.spec, c.key, c.request.nowMs, c.cost));
  }

  function settleBatch(batch: readonly PendingCheck[], reply: ScriptReply): void {
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      const allowed = reply[3 * i];
      if (allowed === 1 || allowed === 0) {
        const decision = { allowed: allowed === 1, remaining: Number(reply[3 * i + 1]), retryAfterMs: Number(reply[3 * i + 2]) };
        finish(c, limitCandidate(c.policy, c.spec, decision, 'hard-limit'));
      } else {
        scriptFailed(c, reply[3 * i + 1]);
        finish(c, failureDecision(c.policy, c.spec, c.key, c.request.nowMs, c.cost));
      }
    }
  }

  /** A check the script could not run (a key of the wrong type, say): Redis is fine, so the breaker is not told. */
  function scriptFailed(check: PendingCheck, error: unknown): void {
    metrics.errors.inc({ reason: 'script' });
    const now = clock();
    if (now - lastScriptErrorLog < 10_000) return;
    lastScriptErrorLog = now;
    log.error({ policy: check.policy.id, key: check.key, err: String(error) }, 'hard-limit script failed for a key; its failure mode decided');
  }

  function send(batch: PendingCheck[]): void {
    if (!breaker.tryAcquire()) {
      failBatch(batch);
      return;
    }
    const keys = new Array<string>(batch.length);
    const args = new Array<string | number>(4 * batch.length);
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      keys[i] = c.key;
      args[4 * i] = ALGORITHM_TAG[c.spec.algorithm];
      args[4 * i + 1] = c.spec.args[0];
      args[4 * i + 2] = c.spec.args[1];
      args[4 * i + 3] = c.cost;
    }
    const started = performance.now();
    withDeadline(runScript(keys, args), timeoutMs, 'hard-limit check', 'REDIS_TIMEOUT').then(
      (reply) => {
        breaker.recordSuccess();
        metrics.latency.observe((performance.now() - started) / 1000);
        metrics.batchSize.observe(batch.length);
        settleBatch(batch, reply);
      },
      (error: unknown) => {
        breaker.recordFailure();
        metrics.errors.inc({ reason: isBanstreamError(error, 'REDIS_TIMEOUT') ? 'timeout' : 'error' });
        log.debug({ err: error instanceof Error ? error.message : String(error), checks: batch.length }, 'hard-limit call failed');
        failBatch(batch);
      },
    );
  }

  return {
    check(items, nowMs) {
      const n = items.length;
      if (n === 0) return Promise.resolve([]);
      const specs = new Array<LimitSpec>(n);
      const keys = new Array<string>(n);
      const costs = new Array<number>(n);
      try {
        // Every spec and cost first: a policy that is not hard or a cost out of range is refused before anything is counted.
        for (let i = 0; i < n; i++) {
          const { policy, subject, cost } = items[i]!;
          specs[i] = limitSpecOf(policy);
          keys[i] = hardLimitKey(keyPrefix, policy.id, specs[i]!.algorithm, subject);
          costs[i] = cost === 1 || cost === undefined ? 1 : checkedCost(cost);
        }
      } catch (error) {
        return Promise.reject(error as Error);
      }
      if (closed || breaker.refusing()) {
        return Promise.resolve(items.map((item, i) => failureDecision(item.policy, specs[i]!, keys[i]!, nowMs, costs[i]!)));
      }
      return new Promise<Candidate[]>((resolve) => {
        const request: PendingRequest = { results: new Array<Candidate>(n), left: n, nowMs, resolve };
        for (let i = 0; i < n; i++) coalescer.add({ request, index: i, policy: items[i]!.policy, spec: specs[i]!, key: keys[i]!, cost: costs[i]! });
      });
    },
    async warmUp() {
      const bound = Math.max(1_000, timeoutMs);
      await withDeadline(runScript([], []), bound, 'hard-limit script warm-up', 'REDIS_TIMEOUT');
      await withDeadline(loadOnEveryNode(options.redis), bound, 'hard-limit script load on every cluster node', 'REDIS_TIMEOUT');
    },
    close() {
      closed = true;
      coalescer.flush();
    },
  };
}
