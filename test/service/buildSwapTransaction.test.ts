import { describe, expect, it } from 'vitest'
import { isEvmToken } from '../../src/engine/index.ts'
import type { QuoteParams } from '../../src/schemas/quote.ts'
import { buildSwapTransaction } from '../../src/service/buildSwapTransaction.ts'
import { ServiceError } from '../../src/service/serviceError.ts'
import { newSwapRef, swapRefToBytes32 } from '../../src/service/swapRef.ts'
import { FROM_ADDRESS, NOW_MS, testDeps } from '../http/testApp.ts'

const params = (overrides: Partial<QuoteParams> = {}): QuoteParams => ({
  fromChain: 'BAS',
  toChain: 'POL',
  fromToken: 'USDC',
  toToken: 'USDC',
  fromAmount: '1000',
  fromAddress: FROM_ADDRESS,
  slippage: 0.005,
  ...overrides,
})

describe('swap references', () => {
  it('are swp_ and 26 Crockford characters, sort by time, and fit a bytes32 as ASCII', () => {
    const early = newSwapRef(1_700_000_000_000)
    const late = newSwapRef(1_700_000_000_001)
    expect(early).toMatch(/^swp_[0-9A-HJKMNP-TV-Z]{26}$/)
    expect(early < late).toBe(true)
    expect(swapRefToBytes32(early)).toHaveLength(66)
    expect(Buffer.from(swapRefToBytes32(early).slice(2), 'hex').toString('utf8').replace(/\0+$/, '')).toBe(early)
    expect(() => swapRefToBytes32('swp_x')).toThrow(/not a swap reference/)
  })
})

describe('buildSwapTransaction', () => {
  const deps = testDeps()
  const swapEaziRef = newSwapRef(NOW_MS, () => new Uint8Array(16))

  it('quotes the BALANCED route and builds its transaction to the configured router', () => {
    const result = buildSwapTransaction(deps, { params: params(), swapEaziRef })
    expect(result.swapEaziRef).toBe(swapEaziRef)
    expect(result.build.transactionRequest.to).toBe(deps.routerOn('BAS').router)
    expect(result.build.order.ref).toBe(swapRefToBytes32(swapEaziRef))
    expect(result.quote.route.id).toBe(result.build.sized.route.id)
    expect(result.build.order.recipient.toLowerCase()).toBe(FROM_ADDRESS)
  })

  it('sends to toAddress when given', () => {
    const toAddress = '0x3333333333333333333333333333333333333333'
    const result = buildSwapTransaction(deps, { params: params({ toAddress }), swapEaziRef })
    expect(result.build.order.recipient).toBe(toAddress)
  })

  it("answers no_route_found (422), the free quote's reason, for a pair not served: why, that nothing was charged, and what else is served", () => {
    const run = () => buildSwapTransaction(deps, { params: params({ fromChain: 'ARB', toChain: 'CEL', toToken: 'cKES' }), swapEaziRef })
    expect(run).toThrow(ServiceError)
    let refusal: ServiceError | undefined
    try {
      run()
    } catch (error) {
      refusal = error as ServiceError
    }
    expect(refusal?.code).toBe('no_route_found')
    expect(refusal?.message).toMatch(
      /^Not built, and nothing was charged: USDC on ARB to cKES on CEL costs about \d+ bps .* more than the 50 bps/,
    )
    expect(refusal?.detail).toMatchObject({ pair: 'USDC->cKES', notServed: { reason: 'cost_exceeds_fee', feeBps: 50 } })
    // cKES is the only KES token the catalogue lists, on Celo only: no other destination in that currency to offer.
    expect(refusal?.detail['alternatives']).toEqual([])
    expect(refusal?.message).toMatch(/No other destination in that currency is served for this amount\.$/)
  })

  it('offers up to three nearest served destinations in the same currency, never another currency', async () => {
    const { nearestAlternatives } = await import('../../src/service/nearestAlternatives.ts')
    const from = deps.catalogue.tokens.get('BAS:USDC')
    const to = deps.catalogue.tokens.get('GNO:EURe')
    if (!from || !isEvmToken(from) || !to || !isEvmToken(to)) throw new Error('catalogue lacks BAS:USDC or GNO:EURe')
    const alternatives = nearestAlternatives(deps, { from, to, amountIn: 1000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
    expect(alternatives.length).toBeGreaterThan(0)
    expect(alternatives.length).toBeLessThanOrEqual(3)
    for (const alternative of alternatives) {
      const token = deps.catalogue.tokens.get(`${alternative.toChain}:${alternative.toToken}`)
      expect(token?.currency).toBe('EUR')
      expect(`${alternative.toChain}:${alternative.toToken}`).not.toBe('GNO:EURe')
      expect(Number(alternative.toAmount)).toBeGreaterThan(0)
    }
  })
})
