import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackage } from '../../scripts/stack/index.mjs';
import { REPO_ROOT } from './processes.js';

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
