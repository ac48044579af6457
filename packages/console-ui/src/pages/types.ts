import type { SessionInfo } from '../api.js';

export interface PageProps {
  session: SessionInfo;
}

export const canWrite = (s: SessionInfo): boolean => s.role !== 'viewer';
export const isAdmin = (s: SessionInfo): boolean => s.role === 'admin';

export interface Ban {
  banId: string;
  subject: string;
  policyId: string;
  reason: string;
  evidenceCount: number;
  windowSeconds: number;
  startedAt: number;
  expiresAt: number;
  preview: boolean;
  escalationLevel: number;
  origin: string;
  httpStatus: number;
  createdBy: string | null;
  evidence?: {
    firstEventAt: number;
    lastEventAt: number;
    sampledEvents: number;
    paths: { value: string; count: number }[];
    methods: { value: string; count: number }[];
    statuses: { value: string; count: number }[];
    userAgents: { value: string; count: number }[];
    edges: { value: string; count: number }[];
  } | null;
}

export interface Alert {
  alertId: string;
  scope: string;
  code: string;
  state: string;
  currentRate: number;
  baselineRate: number;
  zScore: number;
  ratio: number;
  hourOfWeek: number;
  at: number;
}

/** The Overview's snapshot (services/control/src/console/overview.ts). */
export interface OverviewSnapshot {
  at: number;
  eventsPerSecond: number | null;
  eventRecordsPerSecond: number | null;
  bansPerMinute: number;
  liftsPerMinute: number;
  activeBans: number;
  openAlerts: { scope: string; code: string; at: number; currentRate: number; baselineRate: number; zScore: number }[];
  nearest: { policyId: string; subject: string; count: number; threshold: number; share: number; windowSeconds: number; observedAt: number }[];
  denials: { source: string; perSecond: number }[];
  geo: { country: string; rate: number; baseline: number | null }[];
  sources: { url: string; ok: boolean; error?: string }[];
}
