// Small process and port helpers for the stack: pid files, liveness, waiting.
import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { execFileSync } from 'node:child_process';

export class StackError extends Error {}

/** @param {string} file */
export function readPid(file) {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function writePid(file, pid) {
  writeFileSync(file, `${pid}\n`);
}

export function removePid(file) {
  rmSync(file, { force: true });
}

/** Running (a zombie waiting to be reaped counts as gone). */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * Alive and really ours (pids get reused): its command line mentions our stack
 * folder, or it runs inside it (redis-server rewrites its command line).
 */
export function isOurProcess(pid, marker) {
  if (pid === undefined || !isAlive(pid)) return false;
  try {
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) return true;
    return readlinkSync(`/proc/${pid}/cwd`).startsWith(marker);
  } catch {
    return true;
  }
}

/** Resolves true when something accepts TCP connections on the port. */
export function portAnswers(port, host = '127.0.0.1', timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls `check` until it resolves truthy or the deadline passes, then throws `message()`. */
export async function waitFor(check, { timeoutMs, intervalMs = 200, message }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new StackError(typeof message === 'function' ? message() : message);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Sends SIGTERM, waits, then SIGKILL: after this the process is gone. */
export async function stopProcess(pid, { graceMs = 15_000 } = {}) {
  const alive = () => isAlive(pid);
  if (!alive()) return 'not running';
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (!alive()) return 'stopped';
  process.kill(pid, 'SIGKILL');
  while (alive()) await new Promise((r) => setTimeout(r, 50));
  return 'killed';
}

/** The path of a command, or undefined. */
export function which(command) {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export function tail(file, lines = 20) {
  if (!existsSync(file)) return '(no log yet)';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

/** Stops the stack process recorded in `pidFile` if it is really ours, and forgets it. */
export async function stopOwnedProcess(pidFile, marker, graceMs) {
  const pid = readPid(pidFile);
  const result = isOurProcess(pid, marker) ? await stopProcess(pid, { graceMs }) : 'not running';
  removePid(pidFile);
  return result;
}

/** `running (pid N) at ADDRESS` or `stopped`. */
export function ownedProcessStatus(pidFile, marker, address) {
  const pid = readPid(pidFile);
  return isOurProcess(pid, marker) ? `running (pid ${pid}) at ${address}` : 'stopped';
}
