import { join } from 'node:path'
import fc from 'fast-check'
import { getAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import { combineScreeners } from '../../src/compliance/combineScreeners.ts'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { sanctionsListScreener } from '../../src/compliance/sanctionsListScreener.ts'
import type { Screener, ScreenResult } from '../../src/compliance/screener.ts'
import { SanctionsList } from '../../src/schemas/sanctions.ts'

const LAZARUS = '0x098b716b8aaf21512996dc57eb0615e2383e2f96'
const GARANTEX = '0x57ec89a0c056163a0314e413320f9b3abe761259'
const UNLISTED = '0x1111111111111111111111111111111111111111'

const fixture = SanctionsList.parse({ asOf: '2026-08-22', source: 'test fixture', addresses: [LAZARUS, GARANTEX] })
const screener = sanctionsListScreener(fixture)
const HIT: ScreenResult = { isListed: true, list: 'ofac-sdn@2026-08-22' }
const MISS: ScreenResult = { isListed: false }

describe('sanctionsListScreener', () => {
  it.each([
    ['lowercase', LAZARUS],
    ['EIP-55 checksummed', '0x098B716B8Aaf21512996dC57EB0615e2383E2f96'],
    ['uppercase hex', `0x${LAZARUS.slice(2).toUpperCase()}`],
    ['all uppercase, 0X prefix', LAZARUS.toUpperCase()],
    ['padded with whitespace', ` ${LAZARUS}\n`],
  ])('lists a listed address written %s', async (_, address) => {
    expect(await screener.screen(address)).toEqual(HIT)
  })

  it('lists every address in any mix of letter case', async () => {
    const upperFlags = fc.array(fc.boolean(), { minLength: 40, maxLength: 40 })
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fixture.addresses), upperFlags, async (address, upper) => {
        const hex = [...address.slice(2)].map((char, index) => (upper[index] ? char.toUpperCase() : char))
        expect(await screener.screen(`0x${hex.join('')}`)).toEqual(HIT)
      }),
    )
  })

  it.each([
    ['an unlisted address', UNLISTED],
    ['the zero address', '0x0000000000000000000000000000000000000000'],
    ['a listed address with one digit changed', `${LAZARUS.slice(0, 41)}7`],
    ['a listed address with an extra digit', `${LAZARUS}0`],
    ['a listed address without 0x', LAZARUS.slice(2)],
    ['the empty string', ''],
    ['garbage', 'not an address'],
    ['a Tron address', 'TNiq9aXbP9ejUqHdhRwRfvAa8U3gUqzh81'],
  ])('does not list %s', async (_, address) => {
    expect(await screener.screen(address)).toEqual(MISS)
  })

  it('screens the shipped list: a known SDN entry hits in checksummed form, an ordinary address does not', async () => {
    const shipped = loadSanctionsList(join(new URL('../../manifest', import.meta.url).pathname, DEFAULT_SANCTIONS_FILE))
    const real = sanctionsListScreener(shipped)
    expect(await real.screen(getAddress(GARANTEX))).toEqual({ isListed: true, list: `ofac-sdn@${shipped.asOf}` })
    expect(await real.screen(UNLISTED)).toEqual(MISS)
  })
})

/** A screener listing exactly `addresses` under `name`, counting its calls. */
function stub(name: string, addresses: readonly string[]): Screener & { calls: number } {
  const screener = {
    calls: 0,
    async screen(address: string): Promise<ScreenResult> {
      screener.calls += 1
      return addresses.includes(address) ? { isListed: true, list: name } : { isListed: false }
    },
  }
  return screener
}

describe('combineScreeners', () => {
  it('lists nothing when given no screeners', async () => {
    expect(await combineScreeners([]).screen(LAZARUS)).toEqual(MISS)
  })

  it('reports a hit from any screener', async () => {
    const combined = combineScreeners([stub('a', [LAZARUS]), stub('b', [GARANTEX])])
    expect(await combined.screen(LAZARUS)).toEqual({ isListed: true, list: 'a' })
    expect(await combined.screen(GARANTEX)).toEqual({ isListed: true, list: 'b' })
    expect(await combined.screen(UNLISTED)).toEqual(MISS)
  })

  it('reports the first hit in order and does not ask the screeners after it', async () => {
    const first = stub('first', [LAZARUS])
    const second = stub('second', [LAZARUS])
    expect(await combineScreeners([first, second]).screen(LAZARUS)).toEqual({ isListed: true, list: 'first' })
    expect(second.calls).toBe(0)
    expect(await combineScreeners([second, first]).screen(LAZARUS)).toEqual({ isListed: true, list: 'second' })
  })

  it('asks every screener before clearing an address', async () => {
    const screeners = [stub('a', []), stub('b', []), stub('c', [])]
    expect(await combineScreeners(screeners).screen(UNLISTED)).toEqual(MISS)
    expect(screeners.map((screener) => screener.calls)).toEqual([1, 1, 1])
  })

  it('fails closed: a screener that throws makes the whole screen throw rather than clear the address', async () => {
    const broken: Screener = { screen: () => Promise.reject(new Error('oracle unreachable')) }
    await expect(combineScreeners([stub('a', []), broken]).screen(UNLISTED)).rejects.toThrow('oracle unreachable')
  })

  it('is unaffected by later changes to the array it was given', async () => {
    const screeners: Screener[] = [stub('a', [])]
    const combined = combineScreeners(screeners)
    screeners.push(stub('late', [UNLISTED]))
    expect(await combined.screen(UNLISTED)).toEqual(MISS)
  })
})
