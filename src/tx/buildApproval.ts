import { type Address, encodeFunctionData, toHex } from 'viem'
import type { Token } from '../engine/index.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import { approveCall } from './abis.ts'

/** Gas limit of an ERC-20 approve with margin: ~46k from zero (routing.md 5.1), USDC's proxy a little more. */
const APPROVE_GAS = 80_000n

/** The ERC-20 allowance the router needs before the swap: `approve(spender, amount)` on `token`. */
export type Approval = {
  token: Address
  spender: Address
  amount: bigint
  /** Set for tokens (USDT on Ethereum) that refuse to change a non-zero allowance: approve 0 first. */
  resetFirst: boolean
}

export type BuildApprovalParameters = { token: Token; chainId: number; owner: Address; spender: Address; amount: bigint }

export type BuildApprovalReturnType = {
  approval: Approval
  approvalTransactionRequest: TransactionRequest
  approvalResetTransactionRequest?: TransactionRequest
}

function approveRequest(parameters: BuildApprovalParameters, amount: bigint): TransactionRequest {
  return {
    chainId: parameters.chainId,
    from: parameters.owner,
    to: parameters.token.address,
    data: encodeFunctionData({ ...approveCall, args: [parameters.spender, amount] }),
    value: '0x0',
    gas: toHex(APPROVE_GAS),
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
