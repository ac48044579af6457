import type { RequestAttributes } from '../subjects/index.js';
import { compileMatch } from './match.js';
import type { CostRuleSpec } from './schema.js';

/** What a request counts for under one policy. */
export type CostOf = (attrs: Pick<RequestAttributes, 'method' | 'host' | 'path' | 'route' | 'headers' | 'cost'>) => number;

/** No `costs`: the request's own cost (the event's, or check()'s), 1 when it names none. */
const OWN_COST: CostOf = (attrs) => attrs.cost ?? 1;

/**
 * A policy's `costs`, compiled once: the first rule whose conditions all hold gives
 * the cost, else the request's own. The policy's cost replaces the request's rather
 * than multiplying it: the security team weighs its own routes, and a product of two
 * bounded costs could reach 10^12 per request.
 */
export function compileCosts(rules: readonly CostRuleSpec[] | undefined): CostOf {
  if (rules === undefined || rules.length === 0) return OWN_COST;
  const compiled = rules.map((rule) => {
    const matches = compileMatch({
      ...(rule.methods ? { methods: rule.methods } : {}),
      ...(rule.paths ? { paths: rule.paths } : {}),
      ...(rule.pathPrefixes ? { pathPrefixes: rule.pathPrefixes } : {}),
    });
    const routes = rule.routes ? new Set(rule.routes) : undefined;
    return { matches, routes, cost: rule.cost };
  });
  return (attrs) => {
    for (let i = 0; i < compiled.length; i++) {
      const rule = compiled[i]!;
      if (rule.routes !== undefined && (attrs.route === undefined || !rule.routes.has(attrs.route))) continue;
      if (rule.matches(attrs)) return rule.cost;
    }
    return attrs.cost ?? 1;
  };
}
