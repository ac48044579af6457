// depends_on: every target is a service, every condition can be met, and there
// are no cycles (Compose refuses to start them).
import { dependsOnOf, hasHealthcheck, isMap } from './model.mjs';

const CONDITIONS = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);

export function checkDependsOn(name, svc, where, { services, serviceNames }) {
  const [deps, problems] = dependsOnOf(svc, where);
  for (const [target, spec] of Object.entries(deps)) {
    if (target === name) problems.push(`${where}.depends_on: depends on itself`);
    if (!serviceNames.has(target)) {
      problems.push(`${where}.depends_on: \`${target}\` is not a service`);
      continue;
    }
    const condition = isMap(spec) ? (spec.condition ?? 'service_started') : 'service_started';
    if (!CONDITIONS.has(condition)) {
      problems.push(`${where}.depends_on.${target}.condition: \`${condition}\` is not one of ${[...CONDITIONS].join(', ')}`);
    } else if (condition === 'service_healthy' && !hasHealthcheck(services[target])) {
      problems.push(`${where}.depends_on.${target}: waits for service_healthy but \`${target}\` has no healthcheck`);
    } else if (condition === 'service_completed_successfully') {
      const restart = services[target]?.restart;
      if (restart !== undefined && restart !== 'no' && restart !== false) {
        problems.push(`${where}.depends_on.${target}: waits for completion but \`${target}\` has restart: ${restart}, so it never completes`);
      }
    }
  }
  return problems;
}

/** Every depends_on cycle, once. A malformed depends_on is reported again here, as it always has been. */
export function checkDependencyCycles({ services, serviceNames }) {
  const problems = [];
  const state = new Map();
  const visit = (n, trail) => {
    if (state.get(n) === 'done') return;
    if (state.get(n) === 'active') {
      problems.push(`depends_on cycle: ${[...trail.slice(trail.indexOf(n)), n].join(' -> ')}`);
      return;
    }
    state.set(n, 'active');
    let deps = {};
    if (isMap(services[n])) {
      const [d, depProblems] = dependsOnOf(services[n], `services.${n}`);
      problems.push(...depProblems);
      deps = d;
    }
    for (const t of Object.keys(deps)) {
      if (serviceNames.has(t)) visit(t, [...trail, n]);
    }
    state.set(n, 'done');
  };
  for (const n of serviceNames) visit(n, []);
  return problems;
}
