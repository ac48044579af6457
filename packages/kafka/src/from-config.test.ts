import { EventEmitter } from 'node:events';
import type { Admin } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import { kafkaReachable } from './from-config.js';

/** The parts of a kafkajs Admin the readiness check uses: its connect events and describeCluster. */
function fakeAdmin() {
  const emitter = new EventEmitter();
  const describeCluster = vi.fn(async () => ({ brokers: [], controller: 1, clusterId: 'c' }));
  const events = { CONNECT: 'admin.connect', DISCONNECT: 'admin.disconnect' };
  const admin = { events, describeCluster, on: (event: string, listener: () => void) => emitter.on(event, listener) } as unknown as Admin;
  return { admin, describeCluster, emit: (event: string) => emitter.emit(event) };
}

describe('kafkaReachable', () => {
  it('asks nothing of Kafka before the service connected the admin, so a probe cannot race its connect', async () => {
    const { admin, describeCluster, emit } = fakeAdmin();
    const reachable = kafkaReachable(admin, 1_000);
    expect(await reachable()).toBe(false);
    expect(describeCluster).not.toHaveBeenCalled();
    emit('admin.connect');
    expect(await reachable()).toBe(true);
    expect(describeCluster).toHaveBeenCalledTimes(1);
    emit('admin.disconnect');
    expect(await reachable()).toBe(false);
    expect(describeCluster).toHaveBeenCalledTimes(1);
  });

  it('fails when the connected cluster does not answer in time', async () => {
    const { admin, describeCluster, emit } = fakeAdmin();
    describeCluster.mockImplementation(() => new Promise(() => undefined));
    const reachable = kafkaReachable(admin, 20);
    emit('admin.connect');
    await expect(reachable()).rejects.toThrow(/kafka describeCluster/);
  });
});
