// Our own redis-server (Debian's package) on our own port and data folder. A Redis
// that is not ours (for example the machine's on 6379) is never touched.
import { spawn } from 'node:child_process';
import { ensureDebianPackage } from './debian.mjs';
import { mkdirSync, openSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { StackError, isOurProcess, ownedProcessStatus, portAnswers, readPid, stopOwnedProcess, tail, waitFor, writePid } from './processes.mjs';

const pidFile = (s) => join(s.dir, 'redis.pid');

/** Installs Debian's redis-server when missing and we may (root with apt-get). */
export function ensureRedisInstalled(log = console.log) {
  ensureDebianPackage('redis-server', 'redis-server', log);
}

export async function startRedis(s, log = console.log) {
  if (isOurProcess(readPid(pidFile(s)), s.dir)) {
    log(`redis: already running (pid ${readPid(pidFile(s))})`);
  } else {
    if (await portAnswers(s.redisPort)) throw new StackError(`port ${s.redisPort} is in use by another process: stop it or choose another with BANSTREAM_REDIS_PORT.`);
    ensureRedisInstalled(log);
    mkdirSync(s.redisData, { recursive: true });
    mkdirSync(s.logs, { recursive: true });
    const out = openSync(join(s.logs, 'redis.log'), 'a');
    // No persistence: the stack's Redis holds only hard-limit windows with TTLs.
    const args = ['--port', String(s.redisPort), '--bind', '127.0.0.1', '--dir', s.redisData, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'yes'];
    const child = spawn('redis-server', args, { detached: true, stdio: ['ignore', out, out], cwd: s.redisData });
    child.unref();
    writePid(pidFile(s), child.pid);
    log(`redis: started (pid ${child.pid}), logs in ${s.logs}`);
  }
  await waitFor(
    async () => {
      if (!isOurProcess(readPid(pidFile(s)), s.dir)) throw new StackError(`redis exited during start-up:\n${tail(join(s.logs, 'redis.log'))}`);
      return (await ping(s.redisPort)) === '+PONG';
    },
    { timeoutMs: 20_000, message: `redis did not answer PING on ${s.redisUrl} within 20 s` },
  );
}

/** One inline PING; no client library needed before `npm ci`. */
function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      reply += d.toString();
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.trim());
      }
    });
    socket.on('error', () => resolve(''));
    socket.on('close', () => resolve(reply.trim()));
  });
}

export function stopRedis(s) {
  return stopOwnedProcess(pidFile(s), s.dir, 5_000);
}

export function redisStatus(s) {
  return ownedProcessStatus(pidFile(s), s.dir, s.redisUrl);
}
