import { keepKafkajsCoordinatorRefusals } from './coordinator-refusals-fix.js';
import { followKafkajsCoordinatorMoves } from './coordinator-move-fix.js';
import { fixKafkajsFetcherRebalance } from './fetcher-rebalance-fix.js';
import { fixKafkajsEncoder } from './encoder-fix.js';
import { fixKafkajsGrouping } from './grouping-fix.js';
import { fixKafkajsHeartbeatHold } from './heartbeat-beside-fetch-fix.js';
import { fixKafkajsIdleTimerLoop } from './idle-timer-fix.js';
import { fixKafkajsProduceRequest } from './produce-request-fix.js';
import { keepKafkajsMemberAcrossRestarts } from './member-rejoin-fix.js';
import { fixKafkajsFetchOnLeaderMove } from './leader-move-fetch-fix.js';
import { fixKafkajsRequestTimeout } from './request-timeout-fix.js';
import { fixKafkajsSendRetries } from './send-retry-fix.js';
import { readUnreadableBatchesAsStandIns } from './unreadable-batches.js';

/** Which of the thirteen patches are in place after installKafkaPatches(). */
export interface KafkaPatches {
  /** One-pass grouping of a send's records by partition (needs kafkajs not yet loaded). */
  grouping: boolean;
  /** No idle 1 ms timer loop per broker connection. */
  idleTimer: boolean;
  /** The record Encoder without its per-record allocations. */
  encoder: boolean;
  /** Produce requests written in one pass (needs no producer to have sent yet). */
  produceRequest: boolean;
  /** A group's refusal (GROUP_AUTHORIZATION_FAILED) kept as the cause of "Failed to find group coordinator", so the port can name it. */
  coordinatorRefusals: boolean;
  /** A consumer restarted after a crash joins its group as the member it was, not a new one the group makes wait out the old one's session. */
  memberRejoin: boolean;
  /** A heartbeat or commit whose group coordinator's connection is gone goes to the group's current coordinator, as the same member: no crash and rejoin. */
  coordinatorMove: boolean;
  /** A heartbeat whose coordinator holds its answer holds the consumer's reading for HEARTBEAT_WAIT_MS at most, not until the answer (needs the coordinator-move patch first: it wraps its heartbeat). */
  heartbeatHold: boolean;
  /** A consumer whose brokers changed reads the moved partitions at once, without waiting out its other fetches' long polls (needs kafkajs's consumer not yet loaded). */
  fetcherRebalance: boolean;
  /** A consumer that cannot reach a partition's leader refreshes the metadata and fetches from the new one, instead of crashing first. */
  leaderMoveFetch: boolean;
  /** A send's retry waits for the requests of its earlier attempts, so no record is written twice under new sequence numbers (needs kafkajs's producer not yet loaded). */
  sendRetries: boolean;
  /** A batch kafkajs cannot read (Snappy, LZ4, ZSTD; gzip over its bound) read as one stand-in record, not a consumer given up on (needs no fetch decoded yet). */
  unreadableBatches: boolean;
  /** A connection whose request timed out is closed, not used again: a broker cut off the network is passed over, as the Java client does. */
  requestTimeout: boolean;
}

/**
 * Rewrites the installed kafkajs 2.2.4 for the whole process, for every client it makes
 * (docs/decisions/kafkajs-patches.md says why each patch exists). Explicit on purpose:
 * each service's main.ts calls it first, an embedder of @banstream/edge may ask for it
 * (`patchKafkajs`); importing a module never does. Call it before the first client is
 * made (createKafka): the grouping fix can only act before kafkajs is loaded, the
 * Produce request fix only before a producer's first send. Idempotent; a patch that
 * cannot apply leaves kafkajs's own code (slower, same bytes) and reads false here.
 */
export function installKafkaPatches(): KafkaPatches {
  // Grouping first: the others load parts of kafkajs, never its producer.
  const grouping = fixKafkajsGrouping();
  // Next: it loads sendMessages (which takes the grouping above), not yet the producer that takes it.
  const sendRetries = fixKafkajsSendRetries();
  // Before anything loads kafkajs's consumer (its fetch manager takes the fetcher when loaded).
  const fetcherRebalance = fixKafkajsFetcherRebalance();
  return {
    grouping,
    idleTimer: fixKafkajsIdleTimerLoop(),
    encoder: fixKafkajsEncoder(),
    produceRequest: fixKafkajsProduceRequest(),
    coordinatorRefusals: keepKafkajsCoordinatorRefusals(),
    memberRejoin: keepKafkajsMemberAcrossRestarts(),
    // After member rejoin (both wrap joinAndSync), and before the heartbeat patch, which wraps its heartbeat.
    coordinatorMove: followKafkajsCoordinatorMoves(),
    heartbeatHold: fixKafkajsHeartbeatHold(),
    fetcherRebalance,
    leaderMoveFetch: fixKafkajsFetchOnLeaderMove(),
    sendRetries,
    unreadableBatches: readUnreadableBatchesAsStandIns(),
    requestTimeout: fixKafkajsRequestTimeout(),
  };
}
