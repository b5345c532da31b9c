import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The headless-Chromium tests run on their own: `npm run test:browser` (vitest.browser.config.ts).
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    testTimeout: 20_000,
    // Once per run: a migrated PGlite template and the Solidity test contracts, which every file would otherwise redo.
    globalSetup: ['test/support/globalSetup.ts'],
  },
})
