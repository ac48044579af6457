import { BanstreamError } from './errors.js';

/**
 * Request costs: what one request counts for in a window (Envoy ratelimit's
 * `hits_addend`). 1 unless the edge, the caller of check() or a policy's `costs`
 * says otherwise. Bounded, so a window's sum stays exact whatever an edge sends: a
 * record of 500 events adds at most 5 × 10^8 (under an Avro int), and a window's sum
 * stays far under 2^53 (the window store's wide counts are doubles).
 */
export const MAX_COST = 1_000_000;

/** The cost of a request that names none. */
export const DEFAULT_COST = 1;

/** Why `cost` is not a request cost, or undefined when it is one. */
export function costProblem(cost: unknown): string | undefined {
  if (typeof cost !== 'number' || !Number.isInteger(cost)) return `${String(cost)} is not a whole number`;
  if (cost < 1 || cost > MAX_COST) return `${cost} is out of range (1 to ${MAX_COST})`;
  return undefined;
}

/** A request cost, DEFAULT_COST when absent; throws COST_OUT_OF_RANGE naming `where` otherwise. */
export function checkedCost(cost: unknown, where = 'cost'): number {
  if (cost === undefined || cost === null) return DEFAULT_COST;
  const problem = costProblem(cost);
  if (problem !== undefined) throw new BanstreamError('COST_OUT_OF_RANGE', `${where}: ${problem}`, { details: { field: where } });
  return cost as number;
}
