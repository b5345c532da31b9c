import { describe, expect, it } from 'vitest'
import { extendDeps } from '../../src/app/extendDeps.ts'

// Review of issue 15: `{ ...deps, extra }` copied the live market's `catalogue` getter's value at that moment, so what
// serve built from the copy (the app, the relayer, the tracker) priced from the start-up catalogue for good.
describe('extendDeps', () => {
  it("keeps the deps' getters live, adds the extra fields, and lets an extra field replace one of the deps", () => {
    let version = 1
    const deps = { name: 'deps', other: 'kept' } as { name: string; other: string; readonly catalogue: number }
    Object.defineProperty(deps, 'catalogue', { get: () => version, enumerable: true })
    const extended = extendDeps(deps, { chainIds: ['BAS'], name: 'replaced' })
    expect(extended.catalogue).toBe(1)
    version = 2
    expect(extended.catalogue).toBe(2)
    expect({ ...deps }.catalogue).toBe(2)
    expect(extended).toMatchObject({ chainIds: ['BAS'], name: 'replaced', other: 'kept' })
    // What the spread did: a value, frozen.
    const spread = { ...deps }
    version = 3
    expect(spread.catalogue).toBe(2)
    expect(extended.catalogue).toBe(3)
  })
})
