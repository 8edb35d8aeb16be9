import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Worker threads run dist/threads/worker.js: rebuilt here when a source is newer.
    globalSetup: ['test/helpers/build-dist.ts'],
  },
});
