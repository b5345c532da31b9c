import { type Address, encodeFunctionData, type Hex, isAddress, isHex } from 'viem'
import type { SwapEdge, Venue } from '../engine/index.ts'
import {
  curveExchangeCall,
  exactInputSingleCall,
  mentoSwapInCall,
  pancakeStableExchangeCall,
  swapExactTokensForTokensCall,
} from './abis.ts'
import { encodeWithAmountSlot } from './amountSlot.ts'
import { encodeBalancerBatchSwap } from './encodeBalancerBatchSwap.ts'
import type { RouterCall } from './call.ts'

export type EncodeSwapCallParameters = {
  edge: SwapEdge
  /** Estimated input; the executor replaces it on chain with its actual balance of the input token. */
  amountIn: bigint
  /** Least output the venue may return (floored estimate less slippage). */
  minOut: bigint
  /** Where the venue sends its output: the executor, which holds it until the next call or the delivery. */
  recipient: Address
  /** Unix seconds after which venues that take a deadline refuse the swap. */
  deadlineSec: bigint
}

function param(venue: Venue, name: string, kind: 'string' | 'number' | 'boolean'): string | number | boolean {
  const value = venue.params[name]
  if (typeof value !== kind) throw new Error(`venue ${venue.id} (${venue.protocol}) needs params.${name} (${kind}) in manifest/venues.json`)
  return value as string | number | boolean
}

function hexParam(venue: Venue, name: string): Hex {
  const value = param(venue, name, 'string') as string
  if (!isHex(value, { strict: true }))
    throw new Error(`venue ${venue.id} (${venue.protocol}) needs params.${name} (0x-prefixed hex) in manifest/venues.json`)
  return value
}

function addressParam(venue: Venue, name: string): Address {
  const value = param(venue, name, 'string') as string
  if (!isAddress(value, { strict: false }))
    throw new Error(`venue ${venue.id} (${venue.protocol}) needs params.${name} (an address) in manifest/venues.json`)
  return value
}

/** Encodes one same-chain swap as a router call against the venue's public ABI. */
export function encodeSwapCall(parameters: EncodeSwapCallParameters): RouterCall {
  const { edge, amountIn, minOut, recipient, deadlineSec } = parameters
  const { venue } = edge
  const tokenIn = edge.from.address
  const tokenOut = edge.to.address
  let encode: (amount: bigint) => Hex
  switch (venue.protocol) {
    case 'uniswap-v3':
    case 'pancakeswap-v3': {
      const fee = param(venue, 'feeTier', 'number') as number
      encode = (amount) =>
        encodeFunctionData({
          ...exactInputSingleCall,
          args: [{ tokenIn, tokenOut, fee, recipient, amountIn: amount, amountOutMinimum: minOut, sqrtPriceLimitX96: 0n }],
        })
      break
    }
    case 'curve':
    case 'curve-ng':
      // Curve pools send the output to msg.sender: the executor.
      encode = (amount) => encodeFunctionData({ ...curveExchangeCall, args: [BigInt(edge.i), BigInt(edge.j), amount, minOut] })
      break
    case 'pancakeswap-stable':
      encode = (amount) => encodeFunctionData({ ...pancakeStableExchangeCall, args: [BigInt(edge.i), BigInt(edge.j), amount, minOut] })
      break
    case 'aerodrome':
    case 'velodrome': {
      const route = {
        from: tokenIn,
        to: tokenOut,
        stable: param(venue, 'stable', 'boolean') as boolean,
        factory: addressParam(venue, 'factory'),
      }
      encode = (amount) =>
        encodeFunctionData({
          ...swapExactTokensForTokensCall,
          args: [amount, minOut, [route], recipient, deadlineSec],
        })
      break
    }
    case 'balancer-v2':
      return encodeBalancerBatchSwap(parameters)
    case 'mento': {
      const provider = addressParam(venue, 'exchangeProvider')
      const exchangeId = hexParam(venue, 'exchangeId')
      // The Broker sends the output to msg.sender: the executor.
      encode = (amount) => encodeFunctionData({ ...mentoSwapInCall, args: [provider, exchangeId, tokenIn, tokenOut, amount, minOut] })
      break
    }
    default:
      throw new Error(`no transaction encoding for venue protocol ${venue.protocol} (${venue.id})`)
  }
  const { data, amountOffset } = encodeWithAmountSlot(encode, amountIn)
  return { target: venue.contract, token: tokenIn, amountOffset, value: 0n, data }
}
