/** What a backtest reports (GET /v1/backtests/:id), as the CLI renders it. */

/** A subject that went over the policy's threshold. */
export interface OverThreshold {
  subject: string;
  firstAt: number;
  lastAt: number;
  peakCount: number;
  /** Requests sent while over the threshold. */
  requestsOver: number;
  /** Throttle only: requests an enforcer would have refused (the excess share, 1 - threshold/count, summed). */
  refused: number;
}

export interface BanOutcome {
  subject: string;
  startedAt: number;
  expiresAt: number;
  evidenceCount: number;
  escalationLevel: number;
  preview: boolean;
  /** Requests from the subject the ban would have refused. */
  refused: number;
}

export interface PolicyOutcome {
  policyId: string;
  version?: number;
  mode: string;
  action: string;
  /** Requests the policy applies to (match, schedule, subjects). */
  matched: number;
  late: number;
  bans: { total: number; subjects: number; list: BanOutcome[] };
  /** Subjects over the threshold: throttled (throttle), alerted (alert), or over the rate while not banned (ban). */
  overThreshold: { total: number; list: OverThreshold[] };
  affected: { requests: number; requestShare: number; clients: number; clientShare: number };
  topCountries: { name: string; requests: number }[];
  topPrefixes: { name: string; requests: number }[];
}

export interface BacktestReport {
  range: { from: number; to: number };
  records: number;
  events: number;
  invalidEvents: number;
  undecodableRecords: number;
  clients: number;
  candidate: PolicyOutcome;
  active?: PolicyOutcome;
  comparison?: {
    bannedOnlyByCandidate: string[];
    bannedOnlyByActive: string[];
    bannedByBoth: number;
    overOnlyByCandidate: string[];
    overOnlyByActive: string[];
    /** Candidate minus active. */
    affectedRequestsDelta: number;
  };
}
