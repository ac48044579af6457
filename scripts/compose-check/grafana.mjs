// Grafana's mounted datasource files point at services of the compose file.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { bindSourceFor } from './model.mjs';

const GRAFANA_DATASOURCES_IN_CONTAINER = '/etc/grafana/provisioning/datasources';

/** stack: from stackOf; ctx: { projectDir, rel, readYaml }. */
export function checkGrafana(stack, { projectDir, rel, readYaml }) {
  const dsDir = bindSourceFor(stack.services.grafana, GRAFANA_DATASOURCES_IN_CONTAINER, projectDir);
  if (!dsDir || !existsSync(dsDir)) return [];
  const files = statSync(dsDir).isDirectory()
    ? readdirSync(dsDir)
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => path.join(dsDir, f))
    : [dsDir];
  const problems = [];
  if (files.length === 0) problems.push(`${rel(dsDir)}: no datasource files`);
  for (const f of files) {
    const [ds, parseProblems] = readYaml(f, 'grafana');
    problems.push(...parseProblems, ...checkDatasources(ds, rel(f), stack.hostNames));
  }
  return problems;
}

/** ds: one parsed datasource file (undefined if unreadable); label: how to name it in problems. */
export function checkDatasources(ds, label, hostNames) {
  const problems = [];
  for (const d of Array.isArray(ds?.datasources) ? ds.datasources : []) {
    let host;
    try {
      host = new URL(String(d.url)).hostname;
    } catch {
      problems.push(`${label}: datasource \`${d.name}\` has no valid url`);
      continue;
    }
    if (!hostNames.has(host)) problems.push(`${label}: datasource \`${d.name}\` points at \`${host}\`, not a service of the compose file`);
  }
  return problems;
}
