import { type Hex, type LocalAccount, toHex } from 'viem'
import { BASE_CHAIN_ID, USDC_BASE_EIP712 } from '../../src/payments/x402/paymentRequirements.ts'
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/payments/x402/verifyPayment.ts'

/** USDC on Base mainnet, the asset of every challenge. */
export const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'

export type SignPaymentOptions = {
  payTo: string
  nowSec: number
  value?: bigint
  validAfter?: bigint
  validBefore?: bigint
  nonce?: Hex
  asset?: string
  chainId?: number
  network?: string
  scheme?: string
  x402Version?: number
}

let nonceCounter = 0

/** A distinct 32-byte nonce per call, so payments never collide by accident. */
export function freshNonce(): Hex {
  nonceCounter += 1
  return toHex(BigInt(Date.now()) * 1_000_000n + BigInt(nonceCounter), { size: 32 })
}

/** An x402 v1 exact payment signed the way x402-fetch signs it; every field can be bent for a bad-payment test. */
export async function signPayment(
  account: LocalAccount,
  options: SignPaymentOptions,
): Promise<{ payload: Record<string, unknown>; header: string }> {
  const message = {
    from: account.address,
    to: options.payTo as Hex,
    value: options.value ?? 20_000n,
    validAfter: options.validAfter ?? BigInt(options.nowSec - 600),
    validBefore: options.validBefore ?? BigInt(options.nowSec + 300),
    nonce: options.nonce ?? freshNonce(),
  }
  const signature = await account.signTypedData({
    domain: { ...USDC_BASE_EIP712, chainId: options.chainId ?? BASE_CHAIN_ID, verifyingContract: (options.asset ?? USDC_BASE) as Hex },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  })
  const payload = {
    x402Version: options.x402Version ?? 1,
    scheme: options.scheme ?? 'exact',
    network: options.network ?? 'base',
    payload: {
      signature,
      authorization: {
        from: message.from,
        to: message.to,
        value: message.value.toString(),
        validAfter: message.validAfter.toString(),
        validBefore: message.validBefore.toString(),
        nonce: message.nonce,
      },
    },
  }
  return { payload, header: encodeHeader(payload) }
}

/** Standard base64 of the JSON, as x402 clients send it. */
export function encodeHeader(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64')
}
