import {
  type Address,
  BaseError,
  decodeErrorResult,
  ExecutionRevertedError,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  hexToBigInt,
  keccak256,
  RawContractError,
  toHex,
} from 'viem'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import type { ChainCode } from '../schemas/catalogue.ts'

/** A state override as `eth_call` takes it: storage slots of a contract set for this call only. */
export type StateOverride = { address: Address; stateDiff: { slot: Hex; value: Hex }[] }[]

/** What simulation needs of a chain's RPC; a viem public client fits. */
export type SimulationClient = {
  call(parameters: { account: Address; to: Address; data: Hex; value?: bigint; stateOverride?: StateOverride }): Promise<{
    data?: Hex | undefined
  }>
}

/** Simulates a built transaction on its chain's live state; one per chain with an RPC (SWAPEAZI_RPC_URLS). */
export type Simulators = Partial<Record<ChainCode, (parameters: SimulateTransactionParameters) => Promise<Simulation>>>

export type SimulateTransactionParameters = {
  from: Address
  to: Address
  data: Hex
  value: bigint
  /** The token the transaction pulls from the sender: the balance and the allowance to `spender` it is given. */
  input: { token: Address; amount: bigint; spender: Address }
}

export type Simulation =
  | { ok: true }
  /** The transaction reverts: the decoded reason. */
  | { ok: false; reason: string }
  /** Could not simulate (the token's storage layout not found, or the RPC failed): nothing is concluded. */
  | { ok: 'unknown'; why: string }

/** Mapping slots tried for `balanceOf` and `allowance`: Solidity's declaration order covers almost every token. */
const PROBED_SLOTS = 64
/** OpenZeppelin 5's ERC-7201 ERC20 storage: `_balances` at its base, `_allowances` one slot after. */
const OZ5_ERC20_BASE = 0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00n
/** A holder no token has seen, for probing. */
const PROBE_OWNER: Address = '0x000000000000000000000000000000005e7e1e55'
const PROBE_SPENDER: Address = '0x000000000000000000000000000000005e7e5bed'
/** Probe values: MAGIC + candidate index, so one call tells which candidate slot the token reads. */
const MAGIC = 0x5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a00000000n

type Layout = 'solidity' | 'vyper'
type SlotFinder = (owner: Address, spender?: Address) => Hex

const word = (value: bigint): Hex => toHex(value, { size: 32 })

/** keccak(key . slot) (Solidity) or keccak(slot . key) (Vyper) of a mapping at `slot`. */
function mappingSlot(layout: Layout, slot: bigint, key: Address): bigint {
  const pair =
    layout === 'solidity'
      ? encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [key, slot])
      : encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }], [slot, key])
  return hexToBigInt(keccak256(pair))
}

type Candidate = { layout: Layout; slot: bigint }

const CANDIDATES: readonly Candidate[] = [
  ...Array.from({ length: PROBED_SLOTS }, (_, slot) => ({ layout: 'solidity' as const, slot: BigInt(slot) })),
  ...Array.from({ length: PROBED_SLOTS }, (_, slot) => ({ layout: 'vyper' as const, slot: BigInt(slot) })),
  { layout: 'solidity', slot: OZ5_ERC20_BASE },
]

/**
 * Pre-flight simulation of a built transaction (issue 17 item 7): `eth_call` from the sender, with the input token's
 * balance and allowance set for the sender through state overrides, as test frameworks' `deal` does, so a build is
 * checked against the chain's live state before anyone pays or signs, whether or not the sender holds the tokens
 * yet. A token's balance and allowance slots are found by probing once (one call each: every candidate slot is set
 * to a distinct value and the token's own getter says which it read) and kept per token.
 */
export function createTransactionSimulator(client: SimulationClient): (parameters: SimulateTransactionParameters) => Promise<Simulation> {
  const layouts = new Map<Address, Promise<{ balance: SlotFinder; allowance: SlotFinder } | undefined>>()

  async function probe(token: Address, candidateSlot: (candidate: Candidate) => bigint, read: Hex): Promise<Candidate | undefined> {
    const { data } = await client.call({
      account: PROBE_OWNER,
      to: token,
      data: read,
      stateOverride: [
        { address: token, stateDiff: CANDIDATES.map((c, i) => ({ slot: word(candidateSlot(c)), value: word(MAGIC + BigInt(i)) })) },
      ],
    })
    if (data === undefined || data.length < 66) return undefined
    const index = hexToBigInt(data.slice(0, 66) as Hex) - MAGIC
    return index >= 0n && index < BigInt(CANDIDATES.length) ? CANDIDATES[Number(index)] : undefined
  }

  async function findLayout(token: Address): Promise<{ balance: SlotFinder; allowance: SlotFinder } | undefined> {
    const balance = await probe(
      token,
      (c) => mappingSlot(c.layout, c.slot, PROBE_OWNER),
      encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [PROBE_OWNER] }),
    )
    if (balance === undefined) return undefined
    const nested = (c: Candidate, owner: Address, spender: Address): bigint => {
      const slot = c.slot === OZ5_ERC20_BASE ? OZ5_ERC20_BASE + 1n : c.slot
      return mappingSlot(c.layout, mappingSlot(c.layout, slot, owner), spender)
    }
    const allowance = await probe(
      token,
      (c) => nested(c, PROBE_OWNER, PROBE_SPENDER),
      encodeFunctionData({ abi: erc20Abi, functionName: 'allowance', args: [PROBE_OWNER, PROBE_SPENDER] }),
    )
    if (allowance === undefined) return undefined
    return {
      balance: (owner) => word(mappingSlot(balance.layout, balance.slot, owner)),
      allowance: (owner, spender) => word(nested(allowance, owner, spender ?? owner)),
    }
  }

  return async (parameters) => {
    const { from, to, data, value, input } = parameters
    const key = input.token.toLowerCase() as Address
    let found = layouts.get(key)
    if (found === undefined) {
      found = findLayout(input.token).catch(() => undefined)
      layouts.set(key, found)
    }
    const layout = await found
    if (layout === undefined) {
      layouts.delete(key) // an RPC failure is not a layout: try again next time
      return { ok: 'unknown', why: `the storage layout of ${input.token} was not found` }
    }
    const amount = word(input.amount)
    try {
      await client.call({
        account: from,
        to,
        data,
        value,
        stateOverride: [
          {
            address: input.token,
            stateDiff: [
              { slot: layout.balance(from), value: amount },
              { slot: layout.allowance(from, input.spender), value: amount },
            ],
          },
        ],
      })
      return { ok: true }
    } catch (error) {
      const reason = revertReason(error)
      return reason === undefined ? { ok: 'unknown', why: 'the RPC failed' } : { ok: false, reason }
    }
  }
}

/**
 * The revert's reason, decoded against the router's errors (and Error(string), Panic); undefined if it is no revert.
 * viem's `call` wraps a revert as CallExecutionError over the node's error: the revert data rides on a cause's `data`.
 */
function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined
  let data: Hex | undefined
  let reverted: ExecutionRevertedError | undefined
  error.walk((cause) => {
    if (cause instanceof ExecutionRevertedError) reverted = cause
    if (cause instanceof RawContractError) {
      const raw = typeof cause.data === 'string' ? cause.data : cause.data?.data
      if (raw !== undefined) data = raw
    }
    const own = (cause as { data?: unknown }).data
    if (data === undefined && typeof own === 'string' && own.startsWith('0x')) data = own as Hex
    return false
  })
  if (data !== undefined && data !== '0x')
    try {
      const decoded = decodeErrorResult({ abi: swapEaziRouterAbi, data })
      const args = (decoded.args ?? []) as readonly unknown[]
      if ((decoded.errorName as string) === 'Error' && typeof args[0] === 'string') return args[0]
      return args.length === 0 ? decoded.errorName : `${decoded.errorName}(${args.map((arg) => String(arg)).join(', ')})`
    } catch {
      return `reverted with data ${data.slice(0, 74)}`
    }
  if (reverted !== undefined) return reverted.details || 'reverted without a reason'
  return data === '0x' ? 'reverted without a reason' : undefined
}
