import { type Address, encodeFunctionData, toHex } from 'viem'
import { calldataBytesOf, type Catalogue, l1GasUnits, type Token, withGasMargin } from '../engine/index.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import { approveCall } from './abis.ts'

/**
 * Gas limit of an ERC-20 approve's execution with margin: ~46k from zero (routing.md 5.1), USDC's proxy a little
 * more. On an Arbitrum-style chain the L2 gas of its L1 data is added (approveRequest).
 */
export const APPROVE_GAS = 80_000n

/** The ERC-20 allowance the router needs before the swap: `approve(spender, amount)` on `token`. */
export type Approval = {
  token: Address
  spender: Address
  amount: bigint
  /** Set for tokens (USDT on Ethereum) that refuse to change a non-zero allowance: approve 0 first. */
  resetFirst: boolean
}

export type BuildApprovalParameters = {
  /** The token's chain there: its L1 data prices where the L1 fee is gas (ChainInfo.l1GasPrices), and the margin. */
  catalogue: Pick<Catalogue, 'chains' | 'pricing'>
  token: Token
  chainId: number
  owner: Address
  spender: Address
  amount: bigint
}

export type BuildApprovalReturnType = {
  approval: Approval
  approvalTransactionRequest: TransactionRequest
  approvalResetTransactionRequest?: TransactionRequest
}

/**
 * An approve transaction. Its gas is APPROVE_GAS plus, on an Arbitrum-style chain, the L2 gas of its L1 data with the
 * margin (l1GasUnits): the chain charges that gas inside the limit, and without it the approval cannot be mined.
 */
function approveRequest(parameters: BuildApprovalParameters, amount: bigint): TransactionRequest {
  const { catalogue, token } = parameters
  const data = encodeFunctionData({ ...approveCall, args: [parameters.spender, amount] })
  const chain = catalogue.chains.get(token.chain)
  if (chain === undefined) throw new RangeError(`chain ${token.chain} is not in the catalogue`)
  const l1Gas = l1GasUnits(chain, calldataBytesOf(data))
  return {
    chainId: parameters.chainId,
    from: parameters.owner,
    to: token.address,
    data,
    value: '0x0',
    gas: toHex(APPROVE_GAS + (l1Gas === 0n ? 0n : withGasMargin(catalogue, l1Gas))),
  }
}

/** The allowance step before a swap: an exact-amount approval of the router, with a reset step where needed. */
export function buildApproval(parameters: BuildApprovalParameters): BuildApprovalReturnType {
  const resetFirst = parameters.token.needsApprovalReset
  return {
    approval: { token: parameters.token.address, spender: parameters.spender, amount: parameters.amount, resetFirst },
    approvalTransactionRequest: approveRequest(parameters, parameters.amount),
    ...(resetFirst ? { approvalResetTransactionRequest: approveRequest(parameters, 0n) } : {}),
  }
}
