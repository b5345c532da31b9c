import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import {
  BASE_TX_GAS,
  ceilDiv,
  compileCatalogue,
  E18,
  findRoutes,
  isEvmToken,
  L1_FEE_TX_BYTES,
  L1_GAS_IN_LIMIT,
  l1GasUnits,
  parseFixed,
  TX_ENVELOPE_BYTES,
  transactionGasLimit,
  withGasMargin,
} from '../../src/engine/index.ts'
import { L1_FEE_ORACLES } from '../../src/market/feedCatalogue.ts'

// Arbitrum charges a transaction's L1 data fee as L2 gas inside its gas limit (the L1 cost in wei divided by the
// block's base fee); the OP-stack rollups charge theirs apart from it. A gas limit on Arbitrum must hold both.

const { files, catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const arb = catalogue.chains.get('ARB')

describe('which chains charge their L1 data fee as gas inside the limit', () => {
  it('is Arbitrum alone, the chain whose L1 fee the live market reads at ArbGasInfo', () => {
    expect(Object.keys(L1_GAS_IN_LIMIT)).toEqual(['ARB'])
    const arbGasInfoChains = Object.entries(L1_FEE_ORACLES).flatMap(([chain, spec]) => (spec?.kind === 'arbGasInfo' ? [chain] : []))
    expect(arbGasInfoChains).toEqual(['ARB'])
    for (const [id, chain] of catalogue.chains) if (id !== 'ARB') expect(chain.l1GasPrices, id).toBeUndefined()
  })
})

describe('an Arbitrum chain priced from the snapshot', () => {
  it('takes the snapshot’s fee for 4,096 bytes in wei as the per-transaction price and, spread over them, the per-byte one', () => {
    const market = files.market.chains.ARB
    if (market === undefined || arb === undefined) throw new Error('no ARB in the snapshot')
    // USD 0.003 at USD 3,100 per ETH: 967,741,935,484 wei, rounded up.
    const feeWei = ceilDiv(parseFixed(market.l1FeeUsd) * E18, parseFixed(market.nativeUsd))
    expect(feeWei).toBe(967_741_935_484n)
    expect(arb.l1GasPrices).toEqual({ perTxWei: feeWei, perByteWei: ceilDiv(feeWei, 4_096n), minBaseFeeWei: 10_000_000n })
  })

  it('sizes the L1 units of a transaction at least as the snapshot’s whole fee divided by the floor, whatever its size', () => {
    if (arb === undefined) throw new Error('no ARB')
    const feeWei = arb.l1GasPrices?.perTxWei ?? 0n
    for (const bytes of [0, 68, 1_000, 4_096, 20_000]) expect(l1GasUnits(arb, bytes) >= ceilDiv(feeWei, 10_000_000n)).toBe(true)
  })
})

describe('l1GasUnits', () => {
  const chain = { l1GasPrices: { perTxWei: 1_000_000_007n, perByteWei: 100_000_000n, minBaseFeeWei: 10_000_000n } }

  it('is the L1 cost of the calldata and the envelope, in wei, divided by the minimum base fee, rounded up', () => {
    // (1,000,000,007 + 10^8 × (100 + 256)) / 10^7 = 3,660.0000007: 3,661.
    expect(TX_ENVELOPE_BYTES).toBe(256)
    expect(l1GasUnits(chain, 100)).toBe(3_661n)
    expect(l1GasUnits(chain, 0)).toBe(ceilDiv(1_000_000_007n + 25_600_000_000n, 10_000_000n))
  })

  it('is 0 where the L1 fee is not gas', () => {
    expect(l1GasUnits({}, 4_096)).toBe(0n)
  })

  it('divided by a lower floor, is larger: a base fee that falls to the floor can never make it too small', () => {
    const higherFloor = { l1GasPrices: { ...chain.l1GasPrices, minBaseFeeWei: 20_000_000n } }
    expect(l1GasUnits(higherFloor, 1_000) < l1GasUnits(chain, 1_000)).toBe(true)
  })
})

describe('transactionGasLimit', () => {
  it('adds the L1 units to the execution gas on Arbitrum, then the margin', () => {
    if (arb === undefined) throw new Error('no ARB')
    const units = l1GasUnits(arb, 1_000)
    expect(units > 0n).toBe(true)
    expect(transactionGasLimit(catalogue, 'ARB', 200_000n, 1_000)).toBe(withGasMargin(catalogue, 200_000n + units))
  })

  it('is the execution gas with the margin on every other chain, as before', () => {
    for (const chain of ['ETH', 'BAS', 'OPT', 'CEL', 'POL', 'BNB', 'GNO'] as const)
      expect(transactionGasLimit(catalogue, chain, 200_000n, 1_000), chain).toBe(260_000n)
  })

  it('uses the prices the live market read in place of the snapshot’s', () => {
    const read = { perTxWei: 2_240_000_000_000n, perByteWei: 16_000_000_000n, minBaseFeeWei: 20_000_000n }
    const live = compileCatalogue({ ...files, l1GasPrices: { ARB: read, BAS: read } })
    expect(live.chains.get('ARB')?.l1GasPrices).toEqual(read)
    // Base charges its L1 fee outside the gas limit: prices given for it are not taken.
    expect(live.chains.get('BAS')?.l1GasPrices).toBeUndefined()
    // (2.24·10^12 + 1.6·10^10 × 1,256) / 2·10^7 = 1,116,800 units.
    expect(transactionGasLimit(live, 'ARB', 200_000n, 1_000)).toBe(withGasMargin(live, 200_000n + 1_116_800n))
  })
})

describe("a quote's gas limit", () => {
  it('on Arbitrum makes room for the L1 units of the largest route transaction; elsewhere it is as before', () => {
    const pairs = [
      ['ARB:USDC', 'ARB:USDT'],
      ['ARB:USDC', 'BAS:USDC'],
      ['ETH:USDC', 'ETH:USDT'],
      ['BAS:USDC', 'ARB:USDC'],
    ] as const
    if (arb === undefined) throw new Error('no ARB')
    for (const [fromKey, toKey] of pairs) {
      const from = catalogue.tokens.get(fromKey)
      const to = catalogue.tokens.get(toKey)
      if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error(`${fromKey} ${toKey}`)
      const found = findRoutes(catalogue, { from, to, amountIn: 1_000n * 10n ** BigInt(from.decimals), slippageE18: 5n * 10n ** 15n })
      if (found.kind !== 'routes') throw new Error(`${fromKey} to ${toKey}: ${found.kind}`)
      for (const priced of found.viable) {
        const l1 = from.chain === 'ARB' ? l1GasUnits(arb, L1_FEE_TX_BYTES) : 0n
        expect(priced.sourceGasUnits > BASE_TX_GAS).toBe(true)
        expect(priced.gasLimit, priced.route.id).toBe(withGasMargin(catalogue, priced.sourceGasUnits + l1))
      }
    }
  })
})
