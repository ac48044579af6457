import { describe, expect, it } from 'vitest';
import { workerExecArgv } from './worker-pool.js';

describe('workerExecArgv', () => {
  it('puts the workers’ flags in place of the supervisor’s flags of the same names, and keeps the others', () => {
    expect(workerExecArgv(['--enable-source-maps', '--max-semi-space-size=1'], ['--max-semi-space-size=64'])).toEqual(['--enable-source-maps', '--max-semi-space-size=64']);
    expect(workerExecArgv(['--max-semi-space-size', '--inspect'], ['--max-semi-space-size=64'])).toEqual(['--inspect', '--max-semi-space-size=64']);
    expect(workerExecArgv(['--enable-source-maps'], [])).toEqual(['--enable-source-maps']);
  });
});
