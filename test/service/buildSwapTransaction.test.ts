import { describe, expect, it } from 'vitest'
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

  it('answers route_not_executable (422) when every route needs a venue the catalogue cannot encode yet', () => {
    const run = () => buildSwapTransaction(deps, { params: params({ fromChain: 'ETH', toChain: 'GNO', toToken: 'EURe' }), swapEaziRef })
    expect(run).toThrow(ServiceError)
    expect(run).toThrow(/can be quoted but not yet executed/)
    try {
      run()
    } catch (error) {
      expect((error as ServiceError).code).toBe('route_not_executable')
    }
  })
})
