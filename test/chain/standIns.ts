import { type Abi, type Address, type Hex, type Log, type PrivateKeyAccount, getAddress, parseAbi, parseEventLogs } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import { type AnvilInstance, deployContract } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

/** Constructor arguments of every stand-in, by contract name. */
export type StandInConstructorArgs = {
  TestToken: readonly [name: string, symbol: string, decimals: number, version: string]
  ResetApprovalToken: readonly [name: string, symbol: string, decimals: number]
  MoneriumTokenStandIn: readonly [name: string, symbol: string, decimals: number]
  MoneriumFrontStandIn: readonly [controller: Address]
  UniswapV3RouterStandIn: readonly []
  CurvePoolStandIn: readonly [coins: readonly Address[]]
  PancakeStableSwapStandIn: readonly [coins: readonly Address[]]
  SolidlyRouterStandIn: readonly []
  BalancerVaultStandIn: readonly []
  MentoBrokerStandIn: readonly []
  TokenMessengerV2StandIn: readonly [localDomain: number]
  MessageTransmitterV2StandIn: readonly [localDomain: number, token: Address, attester: Address]
  SpokePoolStandIn: readonly []
  StargateOftStandIn: readonly [token: Address, feePpm: bigint]
  LayerZeroEndpointStandIn: readonly []
  BridgeReceiverRecorder: readonly []
}

export type StandInName = keyof StandInConstructorArgs

export const STAND_IN_NAMES = [
  'TestToken',
  'ResetApprovalToken',
  'MoneriumTokenStandIn',
  'MoneriumFrontStandIn',
  'UniswapV3RouterStandIn',
  'CurvePoolStandIn',
  'PancakeStableSwapStandIn',
  'SolidlyRouterStandIn',
  'BalancerVaultStandIn',
  'MentoBrokerStandIn',
  'TokenMessengerV2StandIn',
  'MessageTransmitterV2StandIn',
  'SpokePoolStandIn',
  'StargateOftStandIn',
  'LayerZeroEndpointStandIn',
  'BridgeReceiverRecorder',
] as const satisfies readonly StandInName[]

/**
 * ABI items a stand-in serves without declaring them in Solidity. SpokePoolStandIn dispatches `deposit` from its
 * fallback (the legacy code generator cannot decode its twelve parameters), so its compiled ABI lacks the function.
 */
const EXTRA_ABI: Partial<Record<StandInName, Abi>> = {
  SpokePoolStandIn: parseAbi([
    'function deposit(bytes32 depositor, bytes32 recipient, bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, bytes32 exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message) payable',
  ]),
}

let compiled: Record<StandInName, CompiledContract> | undefined

/** Every .sol file of test/chain/contracts compiled together (test/chain/testContracts.ts), by stand-in name. */
function compileStandIns(): Record<StandInName, CompiledContract> {
  if (compiled) return compiled
  const output = compiledTestContracts('standIns')
  const result = {} as Record<StandInName, CompiledContract>
  for (const name of STAND_IN_NAMES) {
    const keys = Object.keys(output).filter((key) => key.endsWith(`:${name}`))
    const key = keys[0]
    if (keys.length !== 1 || key === undefined) throw new Error(`stand-ins: expected one contract named ${name}, found ${keys.length}`)
    const artifact = output[key]!
    const extra = EXTRA_ABI[name]
    result[name] = extra ? { ...artifact, abi: [...artifact.abi, ...extra] } : artifact
  }
  compiled = result
  return compiled
}

/** ABI and bytecode of one stand-in. */
export function standInArtifact(name: StandInName): CompiledContract {
  return compileStandIns()[name]
}

/** The ABI of one stand-in (including the real function items it serves, e.g. SpokePool `deposit`). */
export function standInAbi(name: StandInName): Abi {
  return standInArtifact(name).abi
}

/** Every stand-in's ABI by name; compiled on first property access. */
export const standInAbis: Readonly<Record<StandInName, Abi>> = Object.defineProperties(
  {} as Record<StandInName, Abi>,
  Object.fromEntries(STAND_IN_NAMES.map((name) => [name, { enumerable: true, get: () => standInAbi(name) }])) as PropertyDescriptorMap,
)

/** Deploys a stand-in from `account` and returns its address. */
export function deployStandIn<N extends StandInName>(
  instance: AnvilInstance,
  account: PrivateKeyAccount,
  name: N,
  args: StandInConstructorArgs[N],
): Promise<Address> {
  return deployContract(instance, account, standInArtifact(name), args)
}

export type DecodedStandInEvent = {
  address: Address
  eventName: string
  args: Record<string, unknown>
  logIndex: number | null
}

/**
 * The logs of `logs` (e.g. receipt.logs) that decode against a stand-in's ABI, optionally only those emitted by
 * `address` and named `eventName`.
 */
export function standInEvents(
  name: StandInName,
  logs: readonly Log[],
  filter: { address?: Address; eventName?: string } = {},
): DecodedStandInEvent[] {
  const parsed = parseEventLogs({ abi: standInAbi(name), logs: [...logs], strict: true })
  return parsed
    .filter((log) => filter.address === undefined || getAddress(log.address) === getAddress(filter.address))
    .filter((log) => filter.eventName === undefined || log.eventName === filter.eventName)
    .map((log) => ({
      address: getAddress(log.address),
      eventName: log.eventName as string,
      args: log.args as Record<string, unknown>,
      logIndex: log.logIndex,
    }))
}

/** The single event named `eventName` that `address` emitted among `logs`; throws unless there is exactly one. */
export function standInEvent(name: StandInName, logs: readonly Log[], address: Address, eventName: string): Record<string, unknown> {
  const events = standInEvents(name, logs, { address, eventName })
  if (events.length !== 1 || !events[0]) throw new Error(`expected one ${eventName} from ${address}, found ${events.length}`)
  return events[0].args
}

/** 20-byte address → left-padded bytes32, as CCTP, Across and LayerZero address accounts. */
export function addressToBytes32(address: Address): Hex {
  return `0x${address.slice(2).toLowerCase().padStart(64, '0')}`
}

/** EIP-712 types of an EIP-2612 permit, as TestToken (and USDC) verify it. */
export const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const
