import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import { fixKafkajsHeartbeatHold, HEARTBEAT_WAIT_MS, HELD_HEARTBEAT_WARN_MS, heartbeatBesideFetches } from './heartbeat-beside-fetch-fix.js';
import { COORDINATOR_RETRY_MS, findCoordinatorBeforeHeartbeat } from './coordinator-move-fix.js';
import { kafkajsOwn } from './kafkajs-own.js';

const require = createRequire(import.meta.url);
const GROUP_MODULE = 'kafkajs/src/consumer/consumerGroup.js';
const RUNNER_MODULE = 'kafkajs/src/consumer/runner.js';

type Group = { coordinator: unknown; memberId: string | null; generationId: number | null; lastRequest: number };
type Runner = { running: boolean; handleBatch(batch: object): Promise<void> };

/** A coordinator whose heartbeat answers come only when the test says. */
function coordinator() {
  const asked: Array<{ answer(): void; fail(error: Error): void }> = [];
  return {
    asked,
    isConnected: () => true,
    heartbeat: () =>
      new Promise<void>((resolve, reject) => {
        asked.push({ answer: resolve, fail: reject });
      }),
  };
}

/** kafkajs's own ConsumerGroup and Runner, loaded anew (the process's kafkajs is left alone), patched or not. */
function consumer(patched: boolean, { overCoordinatorMove = false } = {}) {
  const GroupClass = kafkajsOwn<new (options: object) => Group>(GROUP_MODULE);
  const RunnerClass = kafkajsOwn<new (options: object) => Runner>(RUNNER_MODULE);
  // As installKafkaPatches() stacks them: the coordinator-move heartbeat first, this one over it.
  if (overCoordinatorMove) expect(findCoordinatorBeforeHeartbeat(GroupClass.prototype)).toBe(true);
  if (patched) expect(heartbeatBesideFetches(GroupClass.prototype)).toBe(true);
  const { createLogger, LEVELS } = require('kafkajs/src/loggers/index.js') as { createLogger(o: object): object; LEVELS: { WARN: number } };
  const Emitter = require('kafkajs/src/instrumentation/emitter.js') as new () => object;
  // What kafkajs logs at WARN and above, as the services' log would get it.
  const warnings: Array<{ namespace: string; message: string; extra: Record<string, unknown> }> = [];
  const logger = createLogger({
    level: LEVELS.WARN,
    logCreator:
      () =>
      ({ namespace, log }: { namespace: string; log: { message: string } & Record<string, unknown> }) => {
        const { message, timestamp: _t, logger: _l, ...extra } = log;
        warnings.push({ namespace, message, extra });
      },
  });
  const instrumentationEmitter = new Emitter();
  const broker = coordinator();
  // A cluster whose every FindCoordinator names the same broker (the coordinator-move patch asks after a "moved" answer).
  const cluster = { brokerPool: { findConnectedBroker: async () => ({ findGroupCoordinator: async () => ({ coordinator: { nodeId: 1 } }) }) }, findBroker: async () => broker };
  const group = new GroupClass({ cluster, groupId: 'g', topics: [], logger, instrumentationEmitter, retry: {} });
  // The offset manager only as far as the runner's eachBatch uses it.
  Object.assign(group, { coordinator: broker, memberId: 'member-1', generationId: 4, lastRequest: 0, offsetManager: { resolveOffset: () => undefined } });
  const processed: number[] = [];
  const runner = new RunnerClass({
    logger,
    consumerGroup: group,
    instrumentationEmitter,
    eachBatch: async ({ batch }: { batch: { firstOffset(): string } }) => {
      processed.push(Number(batch.firstOffset()));
    },
    heartbeatInterval: 0,
    onCrash: () => undefined,
    autoCommit: false,
  });
  runner.running = true;
  return { group, runner, broker, processed, warnings };
}

/** A batch of one record at `offset`, with what kafkajs's runner asks of its Batch. */
function batch(offset: number) {
  return {
    topic: 'events',
    partition: 0,
    highWatermark: String(offset + 1),
    messages: [{ offset: String(offset) }],
    offsetLag: () => '0',
    offsetLagLow: () => '0',
    firstOffset: () => String(offset),
    lastOffset: () => String(offset),
    isEmptyDueToFiltering: () => false,
    isEmpty: () => false,
  };
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return settled;
}

/** The `n`th heartbeat the coordinator was asked, once the runner has sent it (after the batch's handler). */
async function asked(broker: ReturnType<typeof coordinator>, n: number) {
  for (let tick = 0; tick < 100 && broker.asked.length <= n; tick++) await settled();
  expect(broker.asked.length).toBeGreaterThan(n);
  return broker.asked[n]!;
}

/** Lets every answer given so far reach kafkajs (its heartbeat clears the one in flight a few ticks after the answer). */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** kafkajs's own error for a broker's answer with Kafka error `code`. */
function answered(code: number): Error {
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
  return createErrorFromCode(code);
}

function rebalancing(): Error {
  return answered(27);
}

describe('heartbeatBesideFetches', () => {
  it("kafkajs's own runner waits for a heartbeat however long its coordinator holds the answer: no batch meanwhile", async () => {
    const { runner, broker, processed } = consumer(false);
    const first = runner.handleBatch(batch(1));
    expect(await settlesWithin(first, 300)).toBe(false);
    expect(processed).toEqual([1]);
    broker.asked[0]!.answer();
    await first;
  });

  it('patched: the runner waits for a held heartbeat only HEARTBEAT_WAIT_MS, reads on, and sends no second one meanwhile', async () => {
    const { runner, broker, processed } = consumer(true);
    const started = Date.now();
    await runner.handleBatch(batch(1));
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEARTBEAT_WAIT_MS - 2);
    expect(Date.now() - started).toBeLessThan(HEARTBEAT_WAIT_MS + 200);
    // Later batches do not wait for it at all.
    expect(await settlesWithin(runner.handleBatch(batch(2)), 10)).toBe(true);
    expect(await settlesWithin(runner.handleBatch(batch(3)), 10)).toBe(true);
    expect(processed).toEqual([1, 2, 3]);
    expect(broker.asked).toHaveLength(1);
    // Answered at last: the next batch's heartbeat is a new one.
    broker.asked[0]!.answer();
    await settled();
    await runner.handleBatch(batch(4));
    expect(broker.asked).toHaveLength(2);
  });

  it('a rebalance answered late is thrown by the next heartbeat, once, so kafkajs joins again', async () => {
    const { runner, broker } = consumer(true);
    await runner.handleBatch(batch(1));
    const error = rebalancing();
    broker.asked[0]!.fail(error);
    await settled();
    await expect(runner.handleBatch(batch(2))).rejects.toBe(error);
    await settled();
    // Thrown once: the next heartbeat is a new one.
    const next = runner.handleBatch(batch(3));
    (await asked(broker, 1)).answer();
    await expect(next).resolves.toBeUndefined();
  });

  it('a heartbeat answered within the wait reaches kafkajs as before, errors and all', async () => {
    const { runner, broker } = consumer(true);
    const error = rebalancing();
    const handled = runner.handleBatch(batch(1));
    await settled();
    (await asked(broker, 0)).fail(error);
    await expect(handled).rejects.toBe(error);
    await settled();
    // Not thrown a second time.
    const next = runner.handleBatch(batch(2));
    (await asked(broker, 1)).answer();
    await expect(next).resolves.toBeUndefined();
  });

  it('a late error of a generation the member has left is dropped: it says nothing of the new one', async () => {
    const { group, runner, broker } = consumer(true);
    await runner.handleBatch(batch(1));
    group.generationId = 5;
    broker.asked[0]!.fail(rebalancing());
    await settled();
    const next = runner.handleBatch(batch(2));
    (await asked(broker, 1)).answer();
    await expect(next).resolves.toBeUndefined();
  });

  it('a heartbeat not due is not sent and costs no wait (no timer)', async () => {
    const { group, runner, broker } = consumer(true);
    group.lastRequest = Date.now();
    (runner as unknown as { heartbeatInterval: number }).heartbeatInterval = 60_000;
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await runner.handleBatch(batch(1));
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    expect(broker.asked).toHaveLength(0);
  });

  it('a heartbeat kafkajs finds due a millisecond after the patch looked is still waited for at most the wait', async () => {
    const { group, broker } = consumer(true);
    group.lastRequest = 1_000;
    // The patch reads the clock first (1,099: not yet due), kafkajs after it (1,100: due).
    let reads = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (reads++ === 0 ? 1_099 : 1_100));
    let beat: Promise<unknown>;
    try {
      beat = (group as unknown as { heartbeat(o: { interval: number }): Promise<unknown> }).heartbeat({ interval: 100 });
      await asked(broker, 0);
    } finally {
      clock.mockRestore();
    }
    expect(await settlesWithin(beat, HEARTBEAT_WAIT_MS + 200)).toBe(true);
  });

  it('over the coordinator-move patch: a late "not available" is skipped as there, a late rebalance still thrown once', async () => {
    const { runner, broker, processed } = consumer(true, { overCoordinatorMove: true });
    await runner.handleBatch(batch(1));
    // 15: COORDINATOR_NOT_AVAILABLE, as a coordinator answers a write not replicated within offsets.commit.timeout.ms.
    broker.asked[0]!.fail(answered(15));
    // Skipped, not thrown: the coordinator-move patch looks the coordinator up again and heartbeats COORDINATOR_RETRY_MS later.
    await new Promise((resolve) => setTimeout(resolve, COORDINATOR_RETRY_MS + 20));
    const second = runner.handleBatch(batch(2));
    (await asked(broker, 1)).fail(rebalancing());
    await expect(second).rejects.toMatchObject({ type: 'REBALANCE_IN_PROGRESS' });
    expect(processed).toEqual([1, 2]);
  });

  it('an answer held HELD_HEARTBEAT_WARN_MS or more is logged when it comes, with how long; a prompt one is not', async () => {
    const { runner, broker, warnings } = consumer(true);
    await runner.handleBatch(batch(1));
    const sentAt = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => sentAt + HELD_HEARTBEAT_WARN_MS + 500);
    try {
      broker.asked[0]!.fail(answered(15));
      await settled();
    } finally {
      clock.mockRestore();
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      namespace: 'ConsumerGroup',
      message: 'The group coordinator held a heartbeat; the consumer read on meanwhile',
      extra: { groupId: 'g', memberId: 'member-1', answer: 'GROUP_COORDINATOR_NOT_AVAILABLE' },
    });
    expect(warnings[0]!.extra.heldMs).toBeGreaterThanOrEqual(HELD_HEARTBEAT_WARN_MS + 400);
    // Left behind but answered well within HELD_HEARTBEAT_WARN_MS: nothing logged.
    const other = consumer(true);
    await other.runner.handleBatch(batch(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.broker.asked[0]!.answer();
    await settled();
    expect(other.warnings).toEqual([]);
  });

  it("is installed on the process's kafkajs, once", () => {
    expect(fixKafkajsHeartbeatHold()).toBe(true);
    expect(fixKafkajsHeartbeatHold()).toBe(true);
  });
});
