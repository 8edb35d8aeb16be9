import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests run the simulator package (@flussonic-exporter/simulator) from its sources, as tsconfig.json
  // typechecks it; node, the exporter's child processes and worker threads load its dist/.
  ssr: { resolve: { conditions: ['@flussonic-exporter/source', ...defaultServerConditions] } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Worker threads run dist/threads/worker.js: rebuilt here when a source is newer.
    globalSetup: ['test/helpers/build-dist.ts'],
  },
});
