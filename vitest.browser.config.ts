import { defineConfig } from 'vitest/config'

// `npm run test:browser`: the developer portal driven in headless Chromium (Debian's `chromium` package through
// playwright-core; CHROMIUM_PATH overrides /usr/bin/chromium). Kept out of `npm test`, which needs no browser.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
