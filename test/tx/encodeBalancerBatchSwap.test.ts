import { type Address, decodeFunctionData, getAddress, hexToBigInt, maxInt256, sliceHex, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import type { SwapEdge } from '../../src/engine/index.ts'
import { balancerVaultAbi } from '../../src/tx/abis.ts'
import { BATCH_SWAP_AMOUNT_OFFSET, encodeBalancerBatchSwap } from '../../src/tx/encodeBalancerBatchSwap.ts'
import { encodeSwapCall } from '../../src/tx/encodeSwapCall.ts'

const { catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const EXECUTOR: Address = getAddress('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e')
const DEADLINE = 1_800_000_600n

// The figures of shared/reference/live-chain.md (a), written out here so a typo in the manifest fails this test.
const VAULT = getAddress('0xBA12222222228d8Ba445958a75a0704d566BF2C8')
const SDAI = getAddress('0xaf204776c7245bF4147c2612BF6e5972Ee483701')
const USDCE = getAddress('0x2a22f9c3b484c3629090FeED35F17Ff8F88f76F0')
const SBAL3 = '0xfc095c811fe836ed12f247bcf042504342b73fb700000000000000000000009f'
const PATHS = {
  'gno-balancer-eure-usdce': {
    symbol: 'EURe',
    pool: '0xdd439304a77f54b1f7854751ac1169b279591ef7000000000000000000000064',
    v1: getAddress('0xcB444e90D8198415266c6a2724b7900fb12FC56E'),
    v2: getAddress('0x420CA0f9B9b604cE0fd9C18EF134C705e5Fa3430'),
  },
  'gno-balancer-gbpe-usdce': {
    symbol: 'GBPe',
    pool: '0x9d93f38b75b376acdfe607cd1ecf4495e047deff00000000000000000000009e',
    v1: getAddress('0x5Cb9073902F2035222B9749F8fB0c9BFe5527108'),
    v2: getAddress('0x8E34bfEC4f6Eb781f9743D9b4af99CD23F9b7053'),
  },
} as const

function edge(venueId: keyof typeof PATHS, fromSymbol: string): SwapEdge {
  const found = catalogue.edgesFrom.get(`GNO:${fromSymbol}`)?.find((e) => e.venue.id === venueId)
  if (!found) throw new Error(`no edge of ${venueId} from ${fromSymbol}`)
  return found
}

const cases = Object.entries(PATHS).flatMap(([venueId, path]) => [
  { venueId: venueId as keyof typeof PATHS, path, sells: true },
  { venueId: venueId as keyof typeof PATHS, path, sells: false },
])

describe('encodeBalancerBatchSwap: one Vault batchSwap through sDAI, as the reference specifies', () => {
  it('uses the Vault’s batchSwap selector', () => {
    expect(toFunctionSelector(balancerVaultAbi[0] as never)).toBe('0x945bcec9')
  })

  it.each(cases)('$venueId, selling the Monerium token: $sells', ({ venueId, path, sells }) => {
    const swapEdge = edge(venueId, sells ? path.symbol : 'USDC.e')
    // The catalogue token is the v2 one; the Vault is called with the v1 front the pools hold.
    expect(getAddress((sells ? swapEdge.from : swapEdge.to).address)).toBe(path.v2)
    const amountIn = sells ? 1_000n * 10n ** 18n : 1_000n * 10n ** 6n
    const minOut = sells ? 1_150_000_000n : 850n * 10n ** 18n
    const call = encodeBalancerBatchSwap({ edge: swapEdge, amountIn, minOut, recipient: EXECUTOR, deadlineSec: DEADLINE })

    expect(call.target).toBe(VAULT)
    expect(call.value).toBe(0n)
    // The executor approves the Vault and is read for its balance through the address the Vault pulls from.
    expect(getAddress(call.token)).toBe(sells ? path.v1 : USDCE)
    expect(call.amountOffset).toBe(BATCH_SWAP_AMOUNT_OFFSET)
    expect(call.amountOffset).toBe(484n)
    expect(hexToBigInt(sliceHex(call.data, 484, 516))).toBe(amountIn)

    const { functionName, args } = decodeFunctionData({ abi: balancerVaultAbi, data: call.data })
    expect(functionName).toBe('batchSwap')
    const [kind, swaps, assets, funds, limits, deadline] = args
    expect(kind).toBe(0)
    expect(assets.map((a) => getAddress(a))).toEqual(sells ? [path.v1, SDAI, USDCE] : [USDCE, SDAI, path.v1])
    expect(swaps).toEqual([
      { poolId: sells ? path.pool : SBAL3, assetInIndex: 0n, assetOutIndex: 1n, amount: amountIn, userData: '0x' },
      { poolId: sells ? SBAL3 : path.pool, assetInIndex: 1n, assetOutIndex: 2n, amount: 0n, userData: '0x' },
    ])
    expect(funds).toEqual({ sender: EXECUTOR, fromInternalBalance: false, recipient: EXECUTOR, toInternalBalance: false })
    expect(limits).toEqual([maxInt256, 0n, -minOut])
    expect(deadline).toBe(DEADLINE)
  })

  it('is what encodeSwapCall dispatches a balancer-v2 venue to', () => {
    const parameters = {
      edge: edge('gno-balancer-eure-usdce', 'EURe'),
      amountIn: 10n ** 18n,
      minOut: 1n,
      recipient: EXECUTOR,
      deadlineSec: DEADLINE,
    }
    expect(encodeSwapCall(parameters)).toEqual(encodeBalancerBatchSwap(parameters))
  })

  it('refuses a venue whose pool ids or front are missing, naming the parameter', () => {
    const swapEdge = edge('gno-balancer-eure-usdce', 'EURe')
    const { hubPoolId: _dropped, ...params } = swapEdge.venue.params
    const broken = { ...swapEdge, venue: { ...swapEdge.venue, params } }
    expect(() => encodeBalancerBatchSwap({ edge: broken, amountIn: 1n, minOut: 1n, recipient: EXECUTOR, deadlineSec: DEADLINE })).toThrow(
      /params\.hubPoolId/,
    )
  })
})
