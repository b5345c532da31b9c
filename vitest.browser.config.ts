import { defineConfig } from 'vitest/config'

// `npm run test:browser`: the developer portal driven in headless Chromium (Debian's `chromium` package through
// playwright-core; CHROMIUM_PATH overrides /usr/bin/chromium). Kept out of `npm test`, which needs no browser.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.test.ts'],
    // The migrated PGlite template, so the page's first key request does not wait for a fresh initdb.
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
