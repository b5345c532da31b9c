import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The headless-Chromium tests run on their own: `npm run test:browser` (vitest.browser.config.ts).
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    testTimeout: 20_000,
    // Once per run: a migrated PGlite template and the Solidity test contracts, which every file would otherwise redo.
    globalSetup: ['test/support/globalSetup.ts'],
    // One worker per core, not vitest's default of one fewer (a single worker on a 2-core CI machine): much of the
    // suite waits on anvil, PostgreSQL and the spawned binaries rather than computing.
    maxWorkers: availableParallelism(),
    // A worker's test files share its module graph instead of importing viem, zod, the MCP SDK, pino and the catalogue
    // again for each file (import time 49 s → 7 s). Nothing relies on a fresh one: no test mocks a module, stubs a
    // global or the environment, or patches console; each file opens and closes its own stores, servers and anvil
    // nodes; testDeps' default store, shared, is one nothing counts on being empty.
    isolate: false,
  },
})
