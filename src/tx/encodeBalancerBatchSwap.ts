import { type Address, encodeFunctionData, type Hex, isAddress, isHex, maxInt256 } from 'viem'
import type { SwapEdge, Token, Venue } from '../engine/index.ts'
import { batchSwapCall } from './abis.ts'
import { encodeWithAmountSlot } from './amountSlot.ts'
import type { RouterCall } from './call.ts'

/**
 * Byte offset of `swaps[0].amount` in a two-step `batchSwap` with empty userData, selector included: the executor
 * writes its balance of the input there. Computed by `encodeWithAmountSlot`; this constant only checks that the
 * encoding keeps the shape the reference measured (shared/reference/live-chain.md (a)).
 */
export const BATCH_SWAP_AMOUNT_OFFSET = 484n

/** Balancer's SwapKind.GIVEN_IN: each step's amount is what goes in. */
const GIVEN_IN = 0

export type EncodeBalancerBatchSwapParameters = {
  edge: SwapEdge
  /** Estimated input; the executor replaces it on chain with its actual balance of the input token. */
  amountIn: bigint
  /** Least output the Vault may pay (floored estimate less slippage). */
  minOut: bigint
  /** Our executor: it calls the Vault, so it is `funds.sender`, and it receives the output. */
  recipient: Address
  /** Unix seconds after which the Vault refuses the swap (BAL#508). */
  deadlineSec: bigint
}

/**
 * A Balancer v2 venue of the catalogue is a path of two pools through a hub asset (manifest/venues.json `params`):
 * `tokens[0]` ⇄ `hubPoolId` ⇄ `hubAsset` ⇄ `poolId` ⇄ `tokens[1]`, where the Vault knows `tokens[1]` as `vaultAsset`
 * (EURe and GBPe on Gnosis: the pools hold the Monerium v1 front, which shares balance and allowance with the v2
 * token the catalogue lists).
 */
type BalancerPath = { poolId: Hex; hubPoolId: Hex; hubAsset: Address; vaultAsset: Address }

function bytes32Param(venue: Venue, name: string): Hex {
  const value = venue.params[name]
  if (typeof value !== 'string' || !isHex(value, { strict: true }) || value.length !== 66)
    throw new Error(`venue ${venue.id} (${venue.protocol}) needs params.${name} (a 32-byte pool id) in manifest/venues.json`)
  return value
}

function addressParam(venue: Venue, name: string): Address {
  const value = venue.params[name]
  if (typeof value !== 'string' || !isAddress(value, { strict: false }))
    throw new Error(`venue ${venue.id} (${venue.protocol}) needs params.${name} (an address) in manifest/venues.json`)
  return value
}

function balancerPath(venue: Venue): BalancerPath {
  return {
    poolId: bytes32Param(venue, 'poolId'),
    hubPoolId: bytes32Param(venue, 'hubPoolId'),
    hubAsset: addressParam(venue, 'hubAsset'),
    vaultAsset: addressParam(venue, 'vaultAsset'),
  }
}

/**
 * Encodes one swap edge of a Balancer v2 venue as a Vault `batchSwap` against the Vault's own ABI: GIVEN_IN, two
 * steps (the first spends the whole input, the second, with amount 0, all of the first's output), the assets in the
 * order of the swap, funds from and to the executor from external balances, limits that admit any input (the
 * executor approves only its balance) and demand at least `minOut` of the output, and the deadline. The call spends
 * the input under the address the Vault knows it by, so the executor approves and pays through the v1 front where
 * the pools hold one.
 */
export function encodeBalancerBatchSwap(parameters: EncodeBalancerBatchSwapParameters): RouterCall {
  const { edge, minOut, recipient, deadlineSec } = parameters
  const { venue } = edge
  if (venue.tokens.length !== 2) throw new Error(`venue ${venue.id} (balancer-v2) must join exactly two tokens`)
  const path = balancerPath(venue)
  // The Vault's name for each of the venue's tokens: tokens[1] through its front, tokens[0] as listed.
  const vaultAssetOf = (token: Token, index: number): Address => (index === 1 ? path.vaultAsset : token.address)
  const sellsPoolToken = edge.i === 1
  const assets: readonly [Address, Address, Address] = [vaultAssetOf(edge.from, edge.i), path.hubAsset, vaultAssetOf(edge.to, edge.j)]
  const [firstPool, secondPool] = sellsPoolToken ? [path.poolId, path.hubPoolId] : [path.hubPoolId, path.poolId]
  // Positive limits bound what the Vault takes, negative ones what it must pay: any input, no hub left over, and at
  // least minOut out.
  const limits = [maxInt256, 0n, -minOut] as const
  const funds = { sender: recipient, fromInternalBalance: false, recipient, toInternalBalance: false }
  const encode = (amount: bigint): Hex =>
    encodeFunctionData({
      ...batchSwapCall,
      args: [
        GIVEN_IN,
        [
          { poolId: firstPool, assetInIndex: 0n, assetOutIndex: 1n, amount, userData: '0x' },
          // Amount 0: all of the previous step's output.
          { poolId: secondPool, assetInIndex: 1n, assetOutIndex: 2n, amount: 0n, userData: '0x' },
        ],
        [...assets],
        funds,
        [...limits],
        deadlineSec,
      ],
    })
  const { data, amountOffset } = encodeWithAmountSlot(encode, parameters.amountIn)
  if (amountOffset !== BATCH_SWAP_AMOUNT_OFFSET)
    throw new Error(`batchSwap put swaps[0].amount at byte ${amountOffset}, not ${BATCH_SWAP_AMOUNT_OFFSET}: the call's shape changed`)
  return { target: venue.contract, token: assets[0], amountOffset, value: 0n, data }
}
