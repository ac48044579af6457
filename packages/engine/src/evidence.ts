import type { BanEvidence, ValueCount } from '@banstream/schemas';

/** Values a ban's evidence lists per attribute. */
export const EVIDENCE_TOP = 5;
/** Characters kept of each value (a path or user agent can be kilobytes). */
export const EVIDENCE_VALUE_CHARS = 128;
/** Candidates tracked per attribute: a few more than shown, so the top five are rarely displaced by the last arrivals. */
const TRACKED = 8;
/** Events of a hot subject sampled one by one before the stride starts doubling. */
const EVERY_EVENT_UNTIL = 64;
/** The longest stride: past it a flood costs one sample in 1,024 events. */
const MAX_STRIDE = 1024;

/**
 * What an event of a hot subject says of itself, for its evidence. Path, method and
 * status are read already; the user agent and the edge are read only when the event is
 * sampled (the events stage finds them in the record then).
 */
export interface EventAtHand {
  readonly path: string;
  readonly method: string;
  readonly status: number | undefined;
  userAgent(): string | undefined;
  edge(): string | undefined;
}

/**
 * Space-Saving top-k over at most TRACKED values: a value not tracked when all slots
 * are taken replaces the least counted one and inherits its count, so the counts are
 * upper bounds and any value over 1/TRACKED of the events is kept.
 */
class TopValues {
  private readonly values: string[] = [];
  private readonly counts: number[] = [];

  add(value: string, weight: number): void {
    const values = this.values;
    for (let i = 0; i < values.length; i++) {
      if (values[i] === value) {
        this.counts[i]! += weight;
        return;
      }
    }
    if (values.length < TRACKED) {
      values.push(value);
      this.counts.push(weight);
      return;
    }
    let least = 0;
    for (let i = 1; i < TRACKED; i++) if (this.counts[i]! < this.counts[least]!) least = i;
    values[least] = value;
    this.counts[least]! += weight;
  }

  top(): ValueCount[] {
    return this.values
      .map((value, i) => ({ value: value.length > EVIDENCE_VALUE_CHARS ? value.slice(0, EVIDENCE_VALUE_CHARS) : value, count: this.counts[i]! }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .slice(0, EVIDENCE_TOP);
  }
}

/**
 * A bounded sample of what one hot (policy, subject) sent: every event up to 64, then
 * one in 2, 4, … up to one in 1,024 as its events double, each sampled event weighed by
 * its stride. Memory is fixed (5 × 8 values), and the cost per event of a flooding
 * subject falls towards one comparison.
 */
export class EvidenceSample {
  /** Events offered: every event of the subject since it turned hot. */
  seen = 0;
  private stride = 1;
  private nextDoubling = EVERY_EVENT_UNTIL;
  private readonly paths = new TopValues();
  private readonly methods = new TopValues();
  private readonly statuses = new TopValues();
  private readonly userAgents = new TopValues();
  private readonly edges = new TopValues();

  add(event: EventAtHand): void {
    const n = this.seen++;
    if (n === this.nextDoubling && this.stride < MAX_STRIDE) {
      this.stride *= 2;
      this.nextDoubling *= 2;
    }
    if (n % this.stride !== 0) return;
    const w = this.stride;
    this.paths.add(event.path, w);
    this.methods.add(event.method, w);
    if (event.status !== undefined) this.statuses.add(String(event.status), w);
    const agent = event.userAgent();
    if (agent !== undefined) this.userAgents.add(agent, w);
    const edge = event.edge();
    if (edge !== undefined) this.edges.add(edge, w);
  }

  /** The ban's evidence: this sample (or none) with the window's first and last event times. */
  static evidence(sample: EvidenceSample | undefined, firstEventAt: number, lastEventAt: number): BanEvidence {
    return {
      firstEventAt,
      lastEventAt,
      sampledEvents: sample?.seen ?? 0,
      paths: sample?.paths.top() ?? [],
      methods: sample?.methods.top() ?? [],
      statuses: sample?.statuses.top() ?? [],
      userAgents: sample?.userAgents.top() ?? [],
      edges: sample?.edges.top() ?? [],
    };
  }
}
