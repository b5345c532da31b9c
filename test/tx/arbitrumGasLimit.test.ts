import fc from 'fast-check'
import { type Address, type Hex, hexToBigInt, numberToHex, toRlp } from 'viem'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import {
  type Catalogue,
  calldataBytesOf,
  compileCatalogue,
  findRoutes,
  isEvmToken,
  l1GasUnits,
  sizeRoute,
  TX_ENVELOPE_BYTES,
  type Token,
  withGasMargin,
} from '../../src/engine/index.ts'
import type { TransactionRequest } from '../../src/schemas/swap.ts'
import { APPROVE_GAS } from '../../src/tx/buildApproval.ts'
import { buildDisbursementTransaction } from '../../src/tx/buildDisbursementTransaction.ts'
import { buildRouteTransaction } from '../../src/tx/buildRouteTransaction.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'

// Arbitrum charges a transaction's L1 data fee as L2 gas inside its gas limit (the L1 cost in wei divided by the
// block's base fee): a `gas` holding execution gas alone is "intrinsic gas too low" there. Anvil does not emulate
// Arbitrum's L1 gas (it charges execution gas only), so these are unit tests on the built transactions.

const { files, catalogue: snapshot } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
/** Prices as ArbGasInfo answers them live, with an L1 byte dear enough that the L1 units outweigh execution. */
const live = compileCatalogue({
  ...files,
  l1GasPrices: { ARB: { perTxWei: 2_240_000_000_000n, perByteWei: 16_000_000_000n, minBaseFeeWei: 20_000_000n } },
})
const ROUTER = routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e')
const SENDER: Address = '0x1111111111111111111111111111111111111111'
const SLIPPAGE = 5n * 10n ** 15n
const REF = `0x${'ab'.repeat(32)}` as const

const evmTokens = (catalogue: Catalogue): Token[] => [...catalogue.tokensByLowerKey.values()].filter(isEvmToken)

/** Every viable route from `from` to every other token at `wholeTokens`, built; the routes it refuses are skipped. */
function buildEvery(catalogue: Catalogue, from: Token, wholeTokens: bigint, to: readonly Token[] = evmTokens(catalogue)) {
  const amountIn = wholeTokens * 10n ** BigInt(from.decimals)
  return to.flatMap((target) => {
    if (target.key === from.key) return []
    const found = findRoutes(catalogue, { from, to: target, amountIn, slippageE18: SLIPPAGE })
    if (found.kind !== 'routes') return []
    return found.viable.flatMap((priced) => {
      const sized = sizeRoute(catalogue, priced.route, priced.amountIn, found.amounts.toAmount)
      if (sized === undefined) return []
      const built = buildRouteTransaction({
        catalogue,
        routerOn: () => ROUTER,
        sized,
        amounts: found.amounts,
        slippageE18: SLIPPAGE,
        sender: SENDER,
        recipient: '0x2222222222222222222222222222222222222222',
        ref: REF,
        nowSec: 1_800_000_000,
      })
      return built.ok ? [{ priced, built }] : []
    })
  })
}

/**
 * The size of the transaction signed, at its widest (EIP-1559: nonce and gas at 8 bytes, fee caps and value at 32, an
 * empty access list, r and s at 32): what Arbitrum charges L1 data for, before it compresses it.
 */
function signedBytes(tx: TransactionRequest): number {
  const u64 = numberToHex(2n ** 64n - 1n)
  const word: Hex = `0x${'ff'.repeat(32)}`
  const rlp = toRlp([numberToHex(tx.chainId), u64, word, word, u64, tx.to, word, tx.data, [], '0x01', word, word])
  return 1 + calldataBytesOf(rlp)
}

/** The L2 gas Arbitrum would charge for the transaction's L1 data at the chain's floor, uncompressed. */
function chargedAtFloor(catalogue: Catalogue, tx: TransactionRequest): bigint {
  const prices = catalogue.chains.get('ARB')?.l1GasPrices
  if (prices === undefined) throw new Error('ARB has no L1 gas prices')
  return (prices.perTxWei + prices.perByteWei * BigInt(signedBytes(tx))) / prices.minBaseFeeWei
}

describe('every transaction built on Arbitrum', () => {
  for (const [name, catalogue] of [
    ['from the snapshot', snapshot],
    ['from prices read live', live],
  ] as const)
    it(`holds its execution estimate plus the L1 units of its own calldata, with the margin (${name})`, () => {
      const arb = catalogue.chains.get('ARB')
      if (arb === undefined) throw new Error('no ARB')
      let checked = 0
      for (const from of evmTokens(catalogue).filter((token) => token.chain === 'ARB'))
        for (const { priced, built } of buildEvery(catalogue, from, 1_000n)) {
          const tx = built.transactionRequest
          const l1 = l1GasUnits(arb, calldataBytesOf(tx.data))
          expect(l1 > 0n).toBe(true)
          const gas = hexToBigInt(tx.gas)
          expect(gas, priced.route.id).toBe(withGasMargin(catalogue, priced.sourceGasUnits + l1))
          expect(gas >= priced.sourceGasUnits + l1).toBe(true)
          // The allowance for the signed envelope covers it: at the floor, never less than the chain charges.
          expect(calldataBytesOf(tx.data) + TX_ENVELOPE_BYTES >= signedBytes(tx)).toBe(true)
          expect(l1 >= chargedAtFloor(catalogue, tx), priced.route.id).toBe(true)
          // The quote's gas limit, sized before the calldata is known, is never below the built one.
          expect(priced.gasLimit >= gas, priced.route.id).toBe(true)
          for (const approval of [built.approvalTransactionRequest, built.approvalResetTransactionRequest]) {
            if (approval === undefined) continue
            const approvalL1 = l1GasUnits(arb, calldataBytesOf(approval.data))
            expect(hexToBigInt(approval.gas)).toBe(APPROVE_GAS + withGasMargin(catalogue, approvalL1))
            expect(approvalL1 >= chargedAtFloor(catalogue, approval)).toBe(true)
          }
          checked++
        }
      expect(checked).toBeGreaterThan(50)
    })

  it('at any size, on prices read live: gas ≥ execution estimate + the L1 units (property)', () => {
    const arb = live.chains.get('ARB')
    const sources = evmTokens(live).filter((token) => token.chain === 'ARB')
    const targets = evmTokens(live)
    if (arb === undefined) throw new Error('no ARB')
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        fc.constantFrom(...targets),
        fc.bigInt({ min: 5n, max: 200_000n }),
        (from, to, wholeTokens) => {
          for (const { priced, built } of buildEvery(live, from, wholeTokens, [to])) {
            const l1 = l1GasUnits(arb, calldataBytesOf(built.transactionRequest.data))
            expect(hexToBigInt(built.transactionRequest.gas) >= priced.sourceGasUnits + l1).toBe(true)
          }
        },
      ),
      { numRuns: 60 },
    )
  })

  it('a disbursement holds its legs’ execution gas plus the L1 units of the whole batch, once', () => {
    const arb = live.chains.get('ARB')
    const usdc = live.tokens.get('ARB:USDC')
    if (arb === undefined || usdc === undefined || !isEvmToken(usdc)) throw new Error('no ARB USDC')
    const [leg] = buildEvery(live, usdc, 200n, [evmTokens(live).find((token) => token.key === 'BAS:USDC') as Token])
    if (leg === undefined) throw new Error('no ARB USDC to BAS USDC route')
    const routeLeg = { ...leg.built, order: { ...leg.built.order, ref: REF } }
    const batch = buildDisbursementTransaction({
      catalogue: live,
      routerOn: () => ROUTER,
      token: usdc,
      sender: SENDER,
      ref: REF,
      legs: [
        { kind: 'transfer', amount: 10n ** 8n, fee: 500_000n, recipient: '0x0000000000000000000000000000000000000001' },
        { kind: 'route', build: routeLeg },
      ],
      nowSec: 1_800_000_000,
    })
    const tx = batch.transactionRequest
    const l1 = l1GasUnits(arb, calldataBytesOf(tx.data))
    const execution = withGasMargin(live, live.pricing.routerOverheadGasUnits) + withGasMargin(live, leg.priced.sourceGasUnits)
    expect(hexToBigInt(tx.gas)).toBe(execution + withGasMargin(live, 21_000n + l1))
    expect(l1 >= chargedAtFloor(live, tx)).toBe(true)
    expect(hexToBigInt(batch.approvalTransactionRequest.gas)).toBe(
      APPROVE_GAS + withGasMargin(live, l1GasUnits(arb, calldataBytesOf(batch.approvalTransactionRequest.data))),
    )
  })
})

describe('a transaction built on any other chain', () => {
  it('keeps its execution gas with the margin, and an approval its fixed gas, as before', () => {
    let checked = 0
    for (const chain of ['ETH', 'BAS', 'OPT', 'POL', 'BNB', 'GNO'] as const) {
      const from = evmTokens(live).find((token) => token.chain === chain)
      if (from === undefined) throw new Error(`no token on ${chain}`)
      for (const { priced, built } of buildEvery(live, from, 1_000n)) {
        expect(hexToBigInt(built.transactionRequest.gas), priced.route.id).toBe(withGasMargin(live, priced.sourceGasUnits))
        expect(priced.gasLimit).toBe(withGasMargin(live, priced.sourceGasUnits))
        expect(hexToBigInt(built.approvalTransactionRequest.gas)).toBe(APPROVE_GAS)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(100)
  })
})
