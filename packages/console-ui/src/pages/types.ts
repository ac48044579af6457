import type { SessionInfo } from '../api.js';

export interface PageProps {
  session: SessionInfo;
}

export const canWrite = (s: SessionInfo): boolean => s.role !== 'viewer';
export const isAdmin = (s: SessionInfo): boolean => s.role === 'admin';

// The API's own shapes (type-only: nothing of these packages reaches the bundle).
export type { Ban, GeoAlert as Alert } from '@banstream/schemas';
export type { OverviewSnapshot } from '@banstream/api';
