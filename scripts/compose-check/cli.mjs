// Step 1: the Compose CLI's own schema and interpolation check, `config -q`.
// `config` only parses, so no Docker engine is needed.
import { spawnSync } from 'node:child_process';

/** The first Compose CLI that answers `version`: `docker compose` (v2), then `docker-compose` (v1). */
export function findCli() {
  const candidates = [
    ['docker', ['compose']],
    ['docker-compose', []],
  ];
  for (const [cmd, pre] of candidates) {
    const r = spawnSync(cmd, [...pre, 'version'], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) return { cmd, pre, label: [cmd, ...pre].join(' '), version: (r.stdout.split('\n')[0] ?? '').trim() };
  }
  return undefined;
}

/**
 * Runs `config -q` (and, if it passes, `config --services` for the count).
 * Returns { cli, problems, notes, serviceCount }; cli is undefined when none is installed.
 */
export function checkWithCli({ composeFile, projectDir, requireCli }) {
  const cli = findCli();
  if (!cli) {
    if (requireCli) {
      return {
        cli,
        problems: ['no Compose CLI found (tried `docker compose` and `docker-compose`); on Debian: apt-get install -y --no-install-recommends docker-compose'],
        notes: [],
      };
    }
    return { cli, problems: [], notes: ['no Compose CLI found (`docker compose` or `docker-compose`); skipping `config -q`'] };
  }
  const base = [...cli.pre, '--project-directory', projectDir, '-f', composeFile];
  const r = spawnSync(cli.cmd, [...base, 'config', '-q'], { encoding: 'utf8', timeout: 120_000, cwd: projectDir });
  if (r.status !== 0) {
    const output = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim() || (r.error ? String(r.error) : `exit ${r.status}`);
    return { cli, problems: [`\`${cli.label} config -q\` rejected the file:\n      ${output.split('\n').join('\n      ')}`], notes: [] };
  }
  let serviceCount;
  const s = spawnSync(cli.cmd, [...base, 'config', '--services'], { encoding: 'utf8', timeout: 120_000, cwd: projectDir });
  if (s.status === 0) serviceCount = s.stdout.split('\n').filter((l) => l.trim() !== '').length;
  return { cli, problems: [], notes: [`\`${cli.label} config -q\` passed (${cli.version})`], serviceCount };
}
