import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { bridgeWireName } from '../../src/engine/index.ts'
import { parsePairCode } from '../../src/intel/parsePairCode.ts'
import { publishedPriors } from '../../src/intel/publishedPriors.ts'
import { getQuote } from '../../src/service/getQuote.ts'
import { QuoteParams } from '../../src/schemas/quote.ts'
import { MANIFEST_DIR, testDeps } from '../http/testApp.ts'

const { catalogue } = loadCatalogue(MANIFEST_DIR)
const priorsOf = (code: string): ReturnType<typeof publishedPriors> => {
  const parsed = parsePairCode(code)
  if (!parsed.ok) throw new Error(parsed.message)
  return publishedPriors(catalogue, parsed.pair)
}

describe('publishedPriors', () => {
  it('gives each bridge joining two chains its manifest p50/p95 for the source chain, fastest first', () => {
    expect(priorsOf('BAS-ARB')).toEqual({
      bridges: [
        { bridge: 'across', settlementSec: { p50: 4, p95: 30 } },
        { bridge: 'cctp-v2-fast', settlementSec: { p50: 20, p95: 60 } },
        { bridge: 'stargate-v2-taxi', settlementSec: { p50: 40, p95: 120 } },
        { bridge: 'stargate-v2-bus', settlementSec: { p50: 120, p95: 600 } },
        { bridge: 'cctp-v2-standard', settlementSec: { p50: 900, p95: 1500 } },
      ],
      hasSameChainRoute: false,
    })
  })

  it('uses the by-source prior where the manifest has one', () => {
    const fromEth = priorsOf('ETH-ARB').bridges
    expect(fromEth.find((b) => b.bridge === 'across')?.settlementSec).toEqual({ p50: 15, p95: 60 })
    expect(fromEth.find((b) => b.bridge === 'cctp-v2-fast')?.settlementSec).toEqual({ p50: 35, p95: 90 })
    expect(priorsOf('POL-ARB').bridges.find((b) => b.bridge === 'cctp-v2-standard')?.settlementSec).toEqual({ p50: 60, p95: 120 })
  })

  it('gives a currency side the slowest prior over the chains it spans', () => {
    const usd = priorsOf('USD-ARB')
    expect(usd.bridges.find((b) => b.bridge === 'across')?.settlementSec).toEqual({ p50: 15, p95: 60 })
    expect(usd.bridges.find((b) => b.bridge === 'cctp-v2-standard')?.settlementSec).toEqual({ p50: 900, p95: 1500 })
    expect(usd.hasSameChainRoute).toBe(true)
  })

  it('has nothing for sides no bridge joins, and says when a same-chain swap serves the pair', () => {
    expect(priorsOf('BAS-TRX')).toEqual({ bridges: [], hasSameChainRoute: false })
    expect(priorsOf('POL-POL')).toEqual({ bridges: [], hasSameChainRoute: true })
    expect(priorsOf('KES-CEL')).toEqual({ bridges: [], hasSameChainRoute: true })
    // TRX is listed for discovery only: no swap is served there.
    expect(priorsOf('USD-TRX')).toEqual({ bridges: [], hasSameChainRoute: false })
    expect(priorsOf('TRX-TRX')).toEqual({ bridges: [], hasSameChainRoute: false })
  })

  it('names bridges as quotes do', () => {
    expect(catalogue.bridgeNames).toEqual([
      'across',
      'cctp-v2-fast',
      'cctp-v2-standard',
      'none',
      'stargate-v2-bus',
      'stargate-v2-taxi',
      'usdt0-oft',
      'usdt0-oft-legacy-mesh',
    ])
    const deps = testDeps()
    const quoted = ['ARB', 'OPT', 'ETH'].map((toChain) => {
      const result = getQuote(
        deps,
        QuoteParams.parse({
          fromChain: 'BAS',
          toChain,
          fromToken: 'USDC',
          toToken: 'USDC',
          fromAmount: '1000',
          fromAddress: '0x1111111111111111111111111111111111111111',
        }),
      )
      if (result.kind !== 'quote') throw new Error(`BAS to ${toChain} did not quote`)
      return result.quote.bridge
    })
    for (const name of quoted) expect(catalogue.bridgeNames).toContain(name)
    expect(catalogue.bridges.map(bridgeWireName)).toEqual(expect.arrayContaining(quoted))
  })
})
