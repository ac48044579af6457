import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 keeps every broker connection waking the event loop about once a
 * millisecond, forever (tulios/kafkajs#1556 and #1704; the fix, #1667, was never
 * released). After each response its request queue re-arms a timer for "when the
 * throttle ends"; with no throttle that delay is negative, Node makes it 1 ms, the
 * timer re-arms itself, and so on, with nothing pending. An idle enforcer sidecar (five
 * connections) spent about 5% of a core and 900 context switches a second on it, time
 * taken from the requests it serves.
 *
 * This replaces that scheduler with kafkajs' own rule minus the loop: a timer only
 * while requests wait, at the throttle's end or, when they wait for an in-flight
 * slot, every 10 ms as before (a response also sends them). Applied once per process,
 * to the one kafkajs every client shares, by installKafkaPatches().
 */

/** kafkajs' own interval for requests that wait for an in-flight slot. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** The fields of kafkajs' RequestQueue the scheduler reads (src/network/requestQueue). */
interface RequestQueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const require = createRequire(import.meta.url);
let applied = false;

/**
 * Patches kafkajs' RequestQueue; returns whether it is patched. A kafkajs whose queue
 * lacks the expected methods is left alone (false): a unit test pins the version.
 */
export function fixKafkajsIdleTimerLoop(): boolean {
  if (applied) return true;
  const proto = kafkajsRequestQueuePrototype() as Partial<RequestQueueState>;
  if (typeof proto.checkPendingRequests !== 'function' || typeof proto.scheduleCheckPendingRequests !== 'function') return false;
  proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueState): void {
    if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
    const untilUnthrottled = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
    );
  };
  applied = true;
  return true;
}

/** The RequestQueue prototype (also for tests that drive the scheduler on a bare queue state). */
export function kafkajsRequestQueuePrototype(): object {
  return (require('kafkajs/src/network/requestQueue/index.js') as { prototype: object }).prototype;
}
