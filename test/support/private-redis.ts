import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';

/**
 * A redis-server of a test's (or benchmark's) own, on a free port, with no
 * persistence: something it may kill, pause and restart without touching the
 * shared Redis other tests use.
 */
export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** Starts it (again, on the same port) and waits for PING. */
  start(): Promise<void>;
  /** SIGKILL: the server is gone, connections drop at once. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open but nothing answers — a hung Redis. */
  pause(): void;
  resume(): void;
  /** Kills it and removes its folder. */
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'banstream-redis-'));
  let child: ChildProcess | undefined;
  // Never leave a server behind, whatever way this process ends.
  const killOnExit = (): void => void child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const server: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (child) throw new Error(`private redis on ${port} is already running`);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];
      const started = spawn('redis-server', args, { stdio: 'ignore' });
      child = started;
      started.once('exit', () => {
        if (child === started) child = undefined;
      });
      const deadline = Date.now() + 10_000;
      while (!(await answersPing(port))) {
        if (child !== started) throw new Error(`redis-server on port ${port} exited during start-up`);
        if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async kill() {
      const running = child;
      if (!running) return;
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGCONT');
      running.kill('SIGKILL');
      await exited;
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async stop() {
      await server.kill();
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
