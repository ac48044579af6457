/**
 * # Event time the sender cannot steer
 *
 * Edges date their events, so an event's time is the sender's word, and it moves
 * clocks here: a partition's watermark (what is late), each key's window ring, the
 * geographic detectors, the cool-down of hot subjects. One event dated ahead would
 * move them all ahead, and every honest event after it would be late (issue 25).
 *
 * So each event is weighed against the time its record was received (`receivedAt`):
 * the record's Kafka timestamp, which the events and subjects topics take from the
 * broker as it appends (LogAppendTime, so no producer chooses it), or the
 * aggregator's clock when that is earlier. An event dated more than
 * AGGREGATOR_MAX_FUTURE_MS ahead of it goes to the DLQ (checkEvent); any other is
 * counted at `countedAt`, its own time but never past that receiving time. No clock
 * passes the receiving clock, so an honest event is late only if it was older than
 * the grace period when it arrived, whatever early events came before it. The skew
 * and the grace period do not interact: the skew only says what is refused.
 *
 * Both depend on the record alone, not on when it is read: a replay after a restart,
 * with the aggregator's clock long past every record, decides as the first pass did
 * (as long as the broker's clock is not ahead of the aggregator's).
 */

/** When a record was received: its Kafka timestamp, or `nowMs` if that is earlier or the timestamp unusable. */
export function receivedAt(recordTimestamp: string, nowMs: number): number {
  const written = Number(recordTimestamp);
  return written > 0 && written < nowMs ? written : nowMs;
}

/** The time an event is counted at: its own, but never past the time its record was received. */
export function countedAt(eventMs: number, receivedMs: number): number {
  return eventMs < receivedMs ? eventMs : receivedMs;
}
