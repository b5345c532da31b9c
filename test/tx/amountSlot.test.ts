import fc from 'fast-check'
import { encodeFunctionData, erc20Abi, type Hex, maxUint256 } from 'viem'
import { describe, expect, it } from 'vitest'
import { balancerVaultAbi, curvePoolAbi, exactInputSingleCall, v3SwapRouterAbi } from '../../src/tx/abis.ts'
import { encodeWithAmountSlot } from '../../src/tx/amountSlot.ts'

const ADDRESS = '0x1111111111111111111111111111111111111111'
const POOL_ID = `0x${'ab'.repeat(32)}` as Hex

/** Calls of several shapes: a struct, int128 indices, a uint256 beside dynamic arrays, an ERC-20 approve. */
const encoders: Record<string, (amount: bigint) => Hex> = {
  exactInputSingle: (amount) =>
    encodeFunctionData({
      abi: v3SwapRouterAbi,
      functionName: 'exactInputSingle',
      args: [
        {
          tokenIn: ADDRESS,
          tokenOut: ADDRESS,
          fee: 100,
          recipient: ADDRESS,
          amountIn: amount,
          amountOutMinimum: 7n,
          sqrtPriceLimitX96: 0n,
        },
      ],
    }),
  curveExchange: (amount) => encodeFunctionData({ abi: curvePoolAbi, functionName: 'exchange', args: [0n, 1n, amount, 7n] }),
  batchSwap: (amount) =>
    encodeFunctionData({
      abi: balancerVaultAbi,
      functionName: 'batchSwap',
      args: [
        0,
        [{ poolId: POOL_ID, assetInIndex: 0n, assetOutIndex: 1n, amount, userData: '0x' }],
        [ADDRESS, ADDRESS],
        { sender: ADDRESS, fromInternalBalance: false, recipient: ADDRESS, toInternalBalance: false },
        [1n, -7n],
        9n,
      ],
    }),
  approve: (amount) => encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [ADDRESS, amount] }),
}

describe('encodeWithAmountSlot', () => {
  it('answers exactly what the encoder gives for the amount, for any amount a uint256 holds', () => {
    for (const encode of Object.values(encoders))
      fc.assert(
        fc.property(fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 128n }), fc.bigInt({ min: 0n, max: maxUint256 })), (amount) => {
          const { data, amountOffset } = encodeWithAmountSlot(encode, amount)
          expect(data).toBe(encode(amount))
          const at = 2 + Number(amountOffset) * 2
          expect(BigInt(`0x${data.slice(at, at + 64)}`)).toBe(amount)
        }),
        { numRuns: 200 },
      )
  })

  it('finds the amount word: after the selector and the words before it', () => {
    expect(encodeWithAmountSlot(encoders['approve'] as (amount: bigint) => Hex, 5n).amountOffset).toBe(36n)
    expect(encodeWithAmountSlot(encoders['curveExchange'] as (amount: bigint) => Hex, 5n).amountOffset).toBe(68n)
    expect(encodeWithAmountSlot(encoders['exactInputSingle'] as (amount: bigint) => Hex, 5n).amountOffset).toBe(132n)
  })

  it('leaves an amount its type cannot hold to the encoder, which refuses it', () => {
    const encode = encoders['approve'] as (amount: bigint) => Hex
    expect(() => encodeWithAmountSlot(encode, maxUint256 + 1n)).toThrow(/not in safe 256-bit unsigned integer range/)
    expect(() => encodeWithAmountSlot(encode, -1n)).toThrow(/not in safe 256-bit unsigned integer range/)
  })

  it('refuses an encoder that puts the amount twice, or nowhere', () => {
    const twice = (amount: bigint): Hex =>
      encodeFunctionData({ abi: curvePoolAbi, functionName: 'exchange', args: [0n, 1n, amount, amount] })
    expect(() => encodeWithAmountSlot(twice, 5n)).toThrow('the amount argument must appear exactly once in the calldata')
    const fixed = (): Hex => encodeFunctionData({ abi: curvePoolAbi, functionName: 'exchange', args: [0n, 1n, 5n, 7n] })
    expect(() => encodeWithAmountSlot(fixed, 5n)).toThrow('the amount argument must appear exactly once in the calldata')
  })

  it('a prepared call encodes what the ABI and function name encode', () => {
    const args = [
      { tokenIn: ADDRESS, tokenOut: ADDRESS, fee: 500, recipient: ADDRESS, amountIn: 3n, amountOutMinimum: 2n, sqrtPriceLimitX96: 0n },
    ] as const
    expect(encodeFunctionData({ ...exactInputSingleCall, args })).toBe(
      encodeFunctionData({ abi: v3SwapRouterAbi, functionName: 'exactInputSingle', args }),
    )
  })
})
