import type { AllowEntry, Ban, FeedRecord, GeoAlert, PolicyRecord } from '@banstream/schemas';
import { BanIndex } from './ban-index.js';

/**
 * What the compacted topics say, as this instance has read them: the latest
 * record per key, every policy version seen (the topic's history until compaction;
 * the audit topic keeps all of it), and the most recent alerts. Fed by the topic
 * feeds and, for read-your-writes, by this instance's own acknowledged writes
 * (applying a record twice is harmless).
 */
export class ControlState {
  readonly policies = new Map<string, PolicyRecord>();
  /** Read only: applyBan keeps it and banIndex in step. */
  readonly bans = new Map<string, Ban>();
  /** The same bans, grouped and sorted for GET /v1/bans. */
  readonly banIndex: BanIndex;
  readonly allowlist = new Map<string, AllowEntry>();
  readonly feeds = new Map<string, FeedRecord>();
  private readonly versions = new Map<string, PolicyRecord[]>();
  private alertRing: GeoAlert[] = [];

  /** `banChunk`: see BanIndex; tests make it small. */
  constructor(
    private readonly alertsKept: number,
    banChunk?: number,
  ) {
    this.banIndex = new BanIndex(banChunk);
  }

  applyPolicy(id: string, record: PolicyRecord | null): void {
    if (record === null) {
      this.policies.delete(id);
      return;
    }
    const held = this.policies.get(id);
    if (held && held.version > record.version) return;
    this.policies.set(id, record);
    const seen = this.versions.get(id) ?? [];
    if (!seen.some((r) => r.version === record.version && r.updatedAt === record.updatedAt)) seen.push(record);
    this.versions.set(id, seen);
  }

  /** Versions of a policy seen on the topic, oldest first; deleted policies keep theirs. */
  policyVersions(id: string): readonly PolicyRecord[] {
    return this.versions.get(id) ?? [];
  }

  applyBan(subject: string, ban: Ban | null): void {
    // The record's key is the subject (a tombstone names only the key): a value naming another is held under its key.
    const held = ban === null || ban.subject === subject ? ban : { ...ban, subject };
    this.banIndex.replace(this.bans.get(subject), held);
    if (held === null) this.bans.delete(subject);
    else this.bans.set(subject, held);
  }

  applyAllow(entry: string, record: AllowEntry | null): void {
    if (record === null) this.allowlist.delete(entry);
    else this.allowlist.set(entry, record);
  }

  applyFeed(name: string, record: FeedRecord | null): void {
    if (record === null) this.feeds.delete(name);
    else this.feeds.set(name, record);
  }

  applyAlert(alert: GeoAlert): void {
    this.alertRing.push(alert);
    if (this.alertRing.length > this.alertsKept * 2) this.alertRing = this.alertRing.slice(-this.alertsKept);
  }

  /** Most recent first. */
  alerts(options: { since?: number; state?: string; limit: number }): GeoAlert[] {
    const out: GeoAlert[] = [];
    const kept = this.alertRing.slice(-this.alertsKept);
    for (let i = kept.length - 1; i >= 0 && out.length < options.limit; i--) {
      const a = kept[i]!;
      if ((options.since === undefined || a.at > options.since) && (options.state === undefined || a.state === options.state)) out.push(a);
    }
    return out;
  }
}
