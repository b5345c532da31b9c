import type { Address, Hex } from 'viem'

/** One call the router's executor makes: the `Call` struct of contracts/SwapEaziTypes.sol. */
export type RouterCall = {
  target: Address
  /** The token the call spends (approved for the executor's whole balance of it), or the zero address. */
  token: Address
  /** Byte offset of the amount argument in `data`, overwritten on chain with that balance; NO_PATCH to keep it. */
  amountOffset: bigint
  value: bigint
  data: Hex
}

/** `amountOffset` meaning "leave data as built" (type(uint256).max in the contract). */
export const NO_PATCH = 2n ** 256n - 1n
