import { randomBytes } from 'node:crypto'
import { type Address, type Hex, type PrivateKeyAccount, getAddress, parseAbi, toHex } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import { eip3009Abi } from '../../src/payments/x402/eip3009Abi.ts'
import { AGENT_CALL_FEE_ATOMIC, BASE_CHAIN_ID, buildPaymentRequirements } from '../../src/payments/x402/paymentRequirements.ts'
import type { VerifiedPayment } from '../../src/payments/x402/settlement.ts'
import { verifyPayment } from '../../src/payments/x402/verifyPayment.ts'
import { PaymentPayload } from '../../src/schemas/x402.ts'
import { signPayment } from '../payments/signPayment.ts'
import { type AnvilInstance, startAnvil, writeContractAndWait } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

/** USDC on Base mainnet; the test token's runtime code is placed here so payments sign over the real domain. */
export const BASE_USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'

const TEST_TOKEN_ABI = parseAbi([
  'function mint(address to, uint256 amount)',
  'function transfer(address to, uint256 value) returns (bool)',
])

let artifact: CompiledContract | undefined

/** Eip3009Token compiled alone, not with the stand-ins (test/chain/testContracts.ts). */
export function eip3009TokenArtifact(): CompiledContract {
  if (artifact) return artifact
  const output = compiledTestContracts('eip3009Token')
  const compiled = output['Eip3009Token.sol:Eip3009Token']
  if (!compiled) throw new Error('baseUsdc: Eip3009Token.sol did not produce Eip3009Token')
  artifact = compiled
  return artifact
}

export type BaseUsdcChain = {
  anvil: AnvilInstance
  usdc: Address
  /** Mints `amount` atomic USDC to `to` (from anvil's last dev account, which tests leave alone). */
  mint(to: Address, amount: bigint): Promise<void>
  /** Moves `from`'s USDC elsewhere, e.g. to drain a payer between check and settle. */
  transfer(from: PrivateKeyAccount, to: Address, amount: bigint): Promise<void>
  balanceOf(account: Address): Promise<bigint>
  stop(): Promise<void>
}

/**
 * A fresh anvil node with chain id 8453 and an EIP-3009 USDC at Base's USDC address (runtime code set with
 * anvil_setCode), so a payment signed for Base mainnet verifies and settles on it.
 */
export async function startBaseUsdc(): Promise<BaseUsdcChain> {
  const code = eip3009TokenArtifact().deployedBytecode
  const anvil = await startAnvil({ chainId: BASE_CHAIN_ID })
  try {
    await anvil.testClient.setCode({ address: BASE_USDC, bytecode: code })
  } catch (error) {
    await anvil.stop()
    throw error
  }
  const minter = anvil.accounts[anvil.accounts.length - 1]!
  return {
    anvil,
    usdc: BASE_USDC,
    mint: async (to, amount) => {
      await writeContractAndWait(anvil, minter, { address: BASE_USDC, abi: TEST_TOKEN_ABI, functionName: 'mint', args: [to, amount] })
    },
    transfer: async (from, to, amount) => {
      await writeContractAndWait(anvil, from, { address: BASE_USDC, abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [to, amount] })
    },
    balanceOf: (account) =>
      anvil.publicClient.readContract({ address: BASE_USDC, abi: eip3009Abi, functionName: 'balanceOf', args: [account] }),
    stop: () => anvil.stop(),
  }
}

export type SignedPaymentParameters = {
  payer: PrivateKeyAccount
  payTo: Address
  /** Default: the fee, 20000. */
  value?: bigint
  /** Default: now. */
  nowSec?: number
  /** Default: 32 random bytes. */
  nonce?: Hex
}

export type SignedPayment = { payload: PaymentPayload; payment: VerifiedPayment }

/**
 * A payment as x402-fetch makes one (EIP-3009 authorization for USDC on Base signed by `payer`, validAfter 10 min
 * back, validBefore + maxTimeoutSeconds) and the VerifiedPayment our offline verification makes of it.
 */
export async function signedPayment(parameters: SignedPaymentParameters): Promise<SignedPayment> {
  const nowSec = parameters.nowSec ?? Math.floor(Date.now() / 1000)
  const requirements = buildPaymentRequirements({
    resource: 'https://swapeazi.test/api/x402/swap',
    payTo: parameters.payTo,
    asset: BASE_USDC,
    description: 'A swap transaction',
  })
  const signed = await signPayment(parameters.payer, {
    payTo: getAddress(parameters.payTo),
    nowSec,
    value: parameters.value ?? AGENT_CALL_FEE_ATOMIC,
    validBefore: BigInt(nowSec + requirements.maxTimeoutSeconds),
    nonce: parameters.nonce ?? toHex(randomBytes(32)),
  })
  const payload = PaymentPayload.parse(signed.payload)
  const verified = await verifyPayment({ payload, requirements, nowSec })
  if (!verified.ok) throw new Error(`signedPayment: our own verification refused it: ${verified.message}`)
  return { payload, payment: verified.payment }
}
