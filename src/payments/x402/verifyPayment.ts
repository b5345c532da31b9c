import { type Address, getAddress, type Hex, recoverTypedDataAddress } from 'viem'
import type { PaymentPayload, PaymentRequirements } from '../../schemas/x402.ts'
import { AGENT_CALL_FEE_ATOMIC, BASE_CHAIN_ID } from './paymentRequirements.ts'
import type { PaymentRejection, VerifiedPayment } from './settlement.ts'

/** EIP-3009 `TransferWithAuthorization`, the typed data an x402 "exact" EVM payment signs. */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

/** Half the order of secp256k1: EIP-2's bound on a signature's s. */
const SECP256K1_HALF_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n / 2n

/** x402's facilitators refuse an authorization expiring within 6 s: it could not land on chain in time. */
const MIN_VALIDITY_LEFT_SEC = 6n
/** An authorization valid for longer than this is refused: a leaked one would stay spendable for too long. */
const MAX_VALIDITY_AHEAD_SEC = 3_600n

export type VerifyPaymentParameters = {
  payload: PaymentPayload
  requirements: PaymentRequirements
  nowSec: number
}

export type VerifyPaymentReturnType = { ok: true; payment: VerifiedPayment } | PaymentRejection

/**
 * Verifies an x402 v1 "exact" payment against what we asked for (DESIGN 7.8), offline: fields first, so a wrong
 * amount or recipient gets its own reason, then the EIP-712 signature recovered with viem. Single use is the
 * store's job (reservation) and the settler's (authorizationState on chain).
 */
export async function verifyPayment(parameters: VerifyPaymentParameters): Promise<VerifyPaymentReturnType> {
  const { payload, requirements, nowSec } = parameters
  const auth = payload.payload.authorization
  if (payload.x402Version !== 1) return reject('invalid_payment', `x402Version must be 1, got ${payload.x402Version}.`)
  if (payload.scheme !== requirements.scheme)
    return reject('unsupported_scheme', `Scheme "${payload.scheme}" is not accepted; pay with scheme "exact".`)
  if (payload.network !== requirements.network)
    return reject('network_mismatch', `The payment is on "${payload.network}"; pay USDC on "${requirements.network}" (Base mainnet).`)
  if (auth.to.toLowerCase() !== requirements.payTo.toLowerCase())
    return reject('recipient_mismatch', `The authorization pays ${auth.to}; it must pay ${requirements.payTo}, the challenge's payTo.`)
  const value = BigInt(auth.value)
  if (value !== AGENT_CALL_FEE_ATOMIC)
    return reject(
      'amount_mismatch',
      `The authorization is for ${auth.value} atomic units; the fee is exactly ${requirements.maxAmountRequired} (USD 0.02 in USDC).`,
    )
  const now = BigInt(nowSec)
  const validAfter = BigInt(auth.validAfter)
  const validBefore = BigInt(auth.validBefore)
  if (validBefore < now + MIN_VALIDITY_LEFT_SEC)
    return reject(
      'authorization_expired',
      `The authorization expired (validBefore ${validBefore}, server time ${now}); sign a new one from a fresh challenge.`,
    )
  if (validAfter > now)
    return reject(
      'authorization_not_yet_valid',
      `The authorization is not valid until ${validAfter} (server time ${now}); check the signer's clock, or set validAfter in the past.`,
    )
  if (validBefore > now + MAX_VALIDITY_AHEAD_SEC)
    return reject(
      'invalid_payment',
      `validBefore is ${validBefore - now} s ahead; at most ${MAX_VALIDITY_AHEAD_SEC} s is accepted (the challenge asks for ${requirements.maxTimeoutSeconds}).`,
    )
  const { signature } = payload.payload
  // 65 bytes: an EOA's ECDSA signature. Smart-wallet (ERC-1271/6492) signatures need the chain to verify.
  if (signature.length !== 132)
    return reject('invalid_signature', 'The signature is not a 65-byte ECDSA signature; pay from an externally owned account.')
  // EIP-2: USDC's ecrecover refuses s above n/2 ("FiatTokenV2: invalid signature"), so such a payment could never be
  // collected on chain. Refused here, before anything is reserved or recorded.
  if (BigInt(`0x${signature.slice(66, 130)}`) > SECP256K1_HALF_N)
    return reject(
      'invalid_signature',
      'The signature is in its high-s form (s above n/2), which USDC refuses on chain (EIP-2); sign again with a standard signer (viem, ethers), which produces low-s signatures.',
    )
  const payer = getAddress(auth.from)
  let signer: Address
  try {
    signer = await recoverTypedDataAddress({
      domain: {
        name: requirements.extra.name,
        version: requirements.extra.version,
        chainId: BASE_CHAIN_ID,
        verifyingContract: requirements.asset,
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: { from: payer, to: getAddress(auth.to), value, validAfter, validBefore, nonce: auth.nonce },
      signature,
    })
  } catch {
    signer = '0x0000000000000000000000000000000000000000'
  }
  if (signer !== payer)
    return reject(
      'invalid_signature',
      `The signature does not recover to ${payer} over USDC on Base (EIP-712 name "${requirements.extra.name}", version "${requirements.extra.version}", chainId ${BASE_CHAIN_ID}, verifyingContract ${requirements.asset}): the payment was altered, or signed for another token or chain.`,
    )
  return {
    ok: true,
    payment: {
      payer,
      payTo: getAddress(requirements.payTo),
      asset: getAddress(requirements.asset),
      value,
      validAfter,
      validBefore,
      nonce: auth.nonce.toLowerCase() as Hex,
      signature,
      payload,
      requirements,
    },
  }
}

function reject(reason: PaymentRejection['reason'], message: string): PaymentRejection {
  return { ok: false, reason, message }
}
