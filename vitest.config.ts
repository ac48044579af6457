import { defineConfig } from 'vitest/config';

// One config at the root. Unit tests live beside the code; integration tests under
// test/ talk to the real Kafka and Redis that test/setup/global.ts provides.
// CI asks for a machine-readable summary as well (BANSTREAM_TEST_REPORT=path).
const report = process.env.BANSTREAM_TEST_REPORT;

export default defineConfig({
  test: {
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'schemas/src/**/*.test.ts',
            'demo/**/*.test.ts',
            'bench/**/*.test.ts',
            'packages/*/src/**/*.test.ts',
            'services/*/src/**/*.test.ts',
            'fuzz/src/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/setup/global.ts'],
          setupFiles: ['test/setup/kafka-patches.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // One broker and one Redis on two cores: run integration files one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
