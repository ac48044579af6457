/**
 * The publications under way, each since it started. Output the aggregator owes
 * Kafka is retried until it goes, by kafkajs within a send (a broker away, too few
 * in-sync replicas) and by retryUntilDone around it, and every later publication
 * waits behind it: one under way for longer than a bound is shown (/readyz,
 * banstream_aggregator_publication_pending_seconds), not retried in silence.
 */
export class PendingPublications {
  private readonly since = new Set<{ readonly sinceMs: number }>();

  /** Marks a publication under way from `nowMs`; the returned function clears it (done, or given up). */
  begin(nowMs: number): () => void {
    const entry = { sinceMs: nowMs };
    this.since.add(entry);
    return () => void this.since.delete(entry);
  }

  /** How long the oldest publication under way has been at it; 0 when none is. */
  longestMs(nowMs: number): number {
    let longest = 0;
    for (const { sinceMs } of this.since) longest = Math.max(longest, nowMs - sinceMs);
    return longest;
  }
}
