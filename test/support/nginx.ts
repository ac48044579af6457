import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackage } from '../../scripts/stack/index.mjs';
import { waitUntil } from './infra.js';
import { exitWithin, freePort, REPO_ROOT, spawnService } from './processes.js';

export interface ExampleNginx {
  child: ChildProcess;
  /** Its prefix folder: configuration, pid, temp files. */
  dir: string;
}

/**
 * Debian's nginx running the shipped examples/nginx/banstream-server.conf, its
 * @…@ addresses filled in, in a folder of its own; `htpasswd` lines for auth_basic
 * (none: nobody authenticates). Installs nginx-light first when run as root.
 */
export function startExampleNginx(ports: { nginx: number; enforcer: number; app: number }, htpasswd = ''): ExampleNginx {
  ensureDebianPackage('nginx', 'nginx-light', (line) => console.log(`[nginx] ${line}`));
  const dir = mkdtempSync(join(tmpdir(), 'banstream-nginx-'));
  writeFileSync(join(dir, 'htpasswd'), htpasswd);
  const server = readFileSync(join(REPO_ROOT, 'examples/nginx/banstream-server.conf'), 'utf8')
    .replaceAll('@LISTEN@', `127.0.0.1:${ports.nginx}`)
    .replaceAll('@ENFORCER@', `127.0.0.1:${ports.enforcer}`)
    .replaceAll('@UPSTREAM@', `127.0.0.1:${ports.app}`)
    .replaceAll('@HTPASSWD@', join(dir, 'htpasswd'));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${join(dir, t)};`).join('\n  ');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;\nmaster_process off;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')} warn;\nevents {}\nhttp {\n  access_log off;\n  ${temp}\n${server}\n}\n`,
  );
  return { child: spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'inherit' }), dir };
}

export interface NginxSidecar {
  /** http://127.0.0.1:<port> of nginx. */
  site: string;
  nginxPort: number;
  /** SIGTERM to nginx and the sidecar, the app closed; waits for the sidecar to exit. */
  stop(): Promise<void>;
}

/**
 * The example's whole set-up: the enforcer as a sidecar (ready), `app` as the upstream,
 * and startExampleNginx in front asking the sidecar through auth_request; resolves once
 * nginx serves `/`. A step that fails stops what was started before it.
 */
export async function startNginxSidecar(options: { enforcerEnv: Record<string, string>; app: RequestListener; htpasswd?: string }): Promise<NginxSidecar> {
  const [enforcerPort, appPort, nginxPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const sidecar = spawnService('enforcer', { LOG_LEVEL: 'warn', ...options.enforcerEnv, HTTP_PORT: String(enforcerPort) });
  const app = createServer(options.app);
  let nginx: ChildProcess | undefined;
  const site = `http://127.0.0.1:${nginxPort}`;
  const stop = async () => {
    nginx?.kill('SIGTERM');
    app.close();
    sidecar.child.kill('SIGTERM');
    await exitWithin(sidecar, 15_000);
  };
  try {
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${enforcerPort}/readyz`)).status === 200,
      () => `enforcer ready\n${sidecar.output()}`,
      60_000,
      50,
    );
    await new Promise<void>((r) => app.listen(appPort, '127.0.0.1', r));
    nginx = startExampleNginx({ nginx: nginxPort, enforcer: enforcerPort, app: appPort }, options.htpasswd).child;
    await waitUntil(async () => (await fetch(`${site}/`)).status === 200, 'nginx to serve the app', 20_000, 50);
  } catch (error) {
    await stop().catch(() => sidecar.child.kill('SIGKILL'));
    throw error;
  }
  return { site, nginxPort, stop };
}
