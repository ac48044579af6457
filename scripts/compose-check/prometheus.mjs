// Prometheus scrapes what the services serve: its mounted prometheus.yml lists
// static targets that are services of the compose file, including every
// banstream service on the HTTP_PORT it is given.
import { existsSync } from 'node:fs';
import { APP_SERVICES } from './banstream.mjs';
import { bindSourceFor, environmentOf, isMap } from './model.mjs';

const PROMETHEUS_CONFIG_IN_CONTAINER = '/etc/prometheus/prometheus.yml';

/** stack: from stackOf; ctx: { projectDir, rel, readYaml }. */
export function checkPrometheus(stack, { projectDir, rel, readYaml }) {
  const promFile = bindSourceFor(stack.services.prometheus, PROMETHEUS_CONFIG_IN_CONTAINER, projectDir);
  if (stack.serviceNames.has('prometheus') && !promFile) {
    return [`services.prometheus: no bind mount to ${PROMETHEUS_CONFIG_IN_CONTAINER}, so it would scrape nothing of ours`];
  }
  if (!promFile || !existsSync(promFile)) return [];
  const [prom, problems] = readYaml(promFile, 'prometheus');
  if (prom === undefined) return problems;
  return [...problems, ...checkScrapeTargets(prom, rel(promFile), stack)];
}

/** prom: the parsed prometheus.yml; label: how to name it in problems. */
export function checkScrapeTargets(prom, label, { services, hostNames }) {
  const problems = [];
  const targets = new Set();
  for (const job of Array.isArray(prom?.scrape_configs) ? prom.scrape_configs : []) {
    for (const sc of Array.isArray(job?.static_configs) ? job.static_configs : []) {
      for (const t of Array.isArray(sc?.targets) ? sc.targets : []) targets.add(String(t));
    }
  }
  if (targets.size === 0) problems.push(`${label}: no static scrape targets`);
  for (const t of targets) {
    const host = t.replace(/:\d+$/, '');
    if (!hostNames.has(host) && !['127.0.0.1', 'localhost'].includes(host)) {
      problems.push(`${label}: target \`${t}\` is not a service of the compose file`);
    }
  }
  for (const name of APP_SERVICES) {
    let port;
    if (isMap(services[name])) {
      // Reading the environment again reports a malformed one a second time, as it always has.
      const [env, envProblems] = environmentOf(services[name], `services.${name}`);
      problems.push(...envProblems);
      port = env.HTTP_PORT;
    }
    if (port !== undefined && !targets.has(`${name}:${port}`)) {
      problems.push(`${label}: does not scrape ${name}:${port} (services.${name} listens on HTTP_PORT ${port})`);
    }
  }
  return problems;
}
