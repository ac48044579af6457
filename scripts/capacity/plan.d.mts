// Types for plan.mjs (plain JavaScript, run by `npm run capacity` with no build).
export interface Target {
  events: number;
  bans: number;
  regions: number;
  headroom: number;
}
export interface Figure {
  value: number;
  source: string;
}
export type FigureName =
  | 'aggregatorCpuUsPerEvent'
  | 'aggregatorEventsPerS'
  | 'aggregatorWorkers'
  | 'eventBytes'
  | 'ingestAvroCpuUsPerEvent'
  | 'ingestJsonCpuUsPerEvent'
  | 'localChecksPerS'
  | 'httpChecksPerS'
  | 'banBytes'
  | 'banFeedLagP99Ms'
  | 'windowBytesPerKey'
  | 'banDelayP99Ms'
  | 'propagationP99Ms'
  | 'roundtripP99Ms';
export type Figures = Partial<Record<FigureName, Figure>>;
export type AssumptionName = 'brokerMbPerS' | 'replicationFactor' | 'coresPerProcess' | 'windowKeys' | 'gatewayShare' | 'rttMs' | 'lingerMs';
export interface PlanRow {
  item: string;
  perRegion: number;
  total: number;
  unit: string;
  from: string;
}
export interface Plan {
  target: Target;
  figures: Figures;
  assumptions: Record<AssumptionName, number>;
  rows: PlanRow[];
  limits: { ok: boolean; text: string }[];
  propagation: { mirrorLagMs: number; rows: { item: string; ms: number; from: string }[] };
}
export interface BenchResult {
  machine?: { cores: number; cpu?: string };
  figures?: Record<string, unknown>;
}

export declare const DEFAULT_TARGET: Readonly<Target>;
export declare const DEFAULT_ASSUMPTIONS: Readonly<Record<AssumptionName, { value: number; flag: string; unit: string; source: string }>>;
export declare const FIGURES: Readonly<Record<FigureName, { bench: string; figure: string; unit: string }>>;
export declare const FALLBACK_FIGURES: Readonly<Figures>;
export declare const ENFORCER_MAX_BANS: Readonly<{ default: number; ceiling: number }>;
export declare const TOPICS: Readonly<{ partitioned: number; single: number }>;
export declare const MARKERS: Readonly<{ begin: string; end: string }>;
export declare function maxIpv4Bans(): number;
export declare function parseNumber(text: string): number | undefined;
export declare function parsePerformanceTable(markdown: string): { machineCores: number | undefined; rows: Map<string, number> };
export declare function figuresFromTable(markdown: string): Figures;
export declare function figuresFromResults(results: Record<string, BenchResult | undefined>): Figures;
export declare function mergeFigures(...sources: (Figures | undefined)[]): Figures;
export declare function checkTarget(target: Target): void;
export declare function computePlan(target: Target, figures: Figures, assumptions?: Partial<Record<AssumptionName, number>>): Plan;
export declare function fmt(x: number): string;
export declare function renderMarkdown(plan: Plan): string;
export declare function renderText(plan: Plan): string;
export declare function replaceSection(document: string, section: string): string;
