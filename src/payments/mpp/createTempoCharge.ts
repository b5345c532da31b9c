import { Challenge, Credential, Errors, Receipt } from 'mppx'
import { Mppx, tempo } from 'mppx/server'
import {
  type Address,
  type Client,
  createClient,
  defineChain,
  type Hex,
  http,
  isAddressEqual,
  keccak256,
  parseEventLogs,
  parseUnits,
  stringToHex,
  TransactionReceiptNotFoundError,
} from 'viem'
import { getBlock, getTransactionReceipt } from 'viem/actions'
import { Abis } from 'viem/tempo'
import { tempo as tempoMainnet } from 'viem/tempo/chains'
import type { MppRejectReason } from '../../schemas/mpp.ts'
import { PATH_USD, PATH_USD_DECIMALS } from './tempoConstants.ts'

export type TempoChargeParameters = {
  /** The Tempo JSON-RPC endpoint every credential is verified against. */
  rpcUrl: string
  chainId: number
  /** Pinned, never taken from a request: the client's attribution memo binds to it (mppx 0.11). */
  realm: string
  /** HMAC key of the challenge ids (at least 32 bytes). */
  secretKey: string
  /** Our Tempo address that the charge pays. */
  recipient: Address
  /** Decimal pathUSD, e.g. "0.02". */
  amount: string
  description: string
  /** How long the RPC may take to answer one call. */
  rpcTimeoutMs?: number
}

/** A verified push payment: the Tempo transaction that paid the challenge, and who sent it. */
export type MppPayment = {
  /** The transaction hash: what makes a payment single use. */
  hash: Hex
  payer: Address
  challengeId: string
  /** RFC 3339: after it the credential is refused (the payment cannot be used once its challenge expired). */
  expires: string
  amountAtomic: bigint
  recipient: Address
  currency: Address
  chainId: number
}

export type MppRejection = { ok: false; reason: MppRejectReason; message: string }
export type MppVerifyOutcome = { ok: true; payment: MppPayment } | MppRejection

/** The Tempo RPC could not be asked (down, timing out, answering errors): nothing about the payment is known. */
export class TempoRpcUnavailableError extends Error {
  override name = 'TempoRpcUnavailableError'
}

/**
 * The MPP rail on one route (DESIGN 7.25): mppx 0.11's server, method `tempo`, intent `charge`, for a fixed amount of
 * pathUSD to our recipient.
 *
 * Only the push mode is offered (`supportedModes: ["push"]`): the payer sends the transfer and then the hash, so the
 * money has moved before we are asked, and verifying it only reads the chain. In pull mode mppx would broadcast the
 * payer's signed transaction inside its own verification, before our swap is recorded, so a failure after it would
 * charge for nothing.
 *
 * Single use: mppx's own verification (`mppx.broadcastCredential`, or its request handler) claims the hash in its
 * store as a separate step, before the route's work is recorded. We verify with `mppx.validateCredential` instead
 * (the same HMAC, binding, expiry, payload, receipt, transfer and memo checks, without the replay claim) and claim the
 * hash in the statement that records the swap (store/createMppPaymentStore.ts), so a hash is claimed exactly when its
 * swap is recorded, on every replica at once, and a payment whose swap could not be recorded stays usable until its
 * challenge expires. mppx is given a store that refuses every write, so that a future call to its claiming path fails
 * loudly instead of keeping a second, per-process replay list.
 */
export type TempoCharge = {
  realm: string
  chainId: number
  recipient: Address
  currency: Address
  amountAtomic: bigint
  /** A fresh challenge, as the value of one `WWW-Authenticate` header. Makes no RPC call. */
  challengeHeader(): Promise<string>
  /**
   * The push payment a credential names, if the credential is readable and its challenge was issued with our key (no
   * RPC call, no expiry check): what a retry is looked up by. A hash plus a challenge id of ours is the credential that
   * paid, since the transfer's memo binds the hash to that challenge.
   */
  identify(authorization: string): { hash: Hex; challengeId: string } | undefined
  /** Verifies an `Authorization: Payment` credential against the RPC; throws TempoRpcUnavailableError only. */
  verify(authorization: string): Promise<MppVerifyOutcome>
  /** The `Payment-Receipt` header of a verified payment. */
  receiptHeader(payment: MppPayment, at: Date): string
}

export function createTempoCharge(parameters: TempoChargeParameters): TempoCharge {
  const { rpcUrl, chainId, realm, secretKey, recipient, amount, description } = parameters
  const chain = defineChain({ ...tempoMainnet, id: chainId })
  const client = createClient({ chain, transport: http(rpcUrl, { retryCount: 1, timeout: parameters.rpcTimeoutMs ?? 10_000 }) })
  const mppx = Mppx.create({
    secretKey,
    realm,
    methods: [tempo.charge({ currency: PATH_USD, recipient, getClient: () => client, store: refusingStore() })],
  })
  // The same request issues and verifies a challenge: mppx pins the echoed challenge's amount, currency, recipient,
  // chain and modes to it (the description travels beside the request, and only the HMAC covers it).
  const request = { amount, chainId, supportedModes: ['push'] as ['push'] }
  const amountAtomic = parseUnits(amount, PATH_USD_DECIMALS)

  return {
    realm,
    chainId,
    recipient,
    currency: PATH_USD,
    amountAtomic,
    async challengeHeader() {
      return Challenge.serialize(await mppx.challenge.tempo.charge({ ...request, description }))
    },
    identify(authorization) {
      const credential = readCredential(authorization)
      const payload = credential?.payload as { type?: unknown; hash?: unknown } | undefined
      if (credential === undefined || payload?.type !== 'hash' || !isTransactionHash(payload.hash)) return undefined
      if (!Challenge.verify(credential.challenge, { secretKey })) return undefined
      return { hash: payload.hash.toLowerCase() as Hex, challengeId: credential.challenge.id }
    },
    async verify(authorization) {
      const credential = readCredential(authorization)
      if (credential === undefined) {
        return reject(
          'invalid_payment',
          'Authorization: Payment does not hold a readable MPP credential (base64url JSON of {challenge, payload, source}).',
        )
      }
      const payload = credential.payload as { type?: unknown; hash?: unknown } | undefined
      // A payload of the wrong shape is the client's mistake, refused before mppx reads it: mppx rethrows its schema's
      // error as it is, which is not an RPC failure (never a 503 that sends the client to retry, never a 5xx).
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || typeof payload.type !== 'string')
        return reject('invalid_payment', `The credential's payload is not a tempo charge payload: send {type: "hash", hash} (push mode).`)
      if (payload.type === 'transaction') return reject('unsupported_mode', PUSH_ONLY)
      if (payload.type !== 'hash')
        return reject(
          'invalid_payment',
          `The credential's payload type ${JSON.stringify(payload.type.slice(0, 40))} is not taken here: send {type: "hash", hash} (push mode).`,
        )
      // A hash a node would refuse as a parameter is the client's mistake, not an RPC failure (never a 5xx).
      if (!isTransactionHash(payload.hash))
        return reject('invalid_payment', "The credential's payload.hash is not a transaction hash (0x and 64 hex digits).")
      try {
        await mppx.validateCredential(credential, { realm, request })
      } catch (error) {
        if (error instanceof Errors.PaymentExpiredError) {
          // Expired now, but a transfer included before it expired was made in time: it is kept by the recipient,
          // so it still buys its swap (a 503 of ours, or a refusal the payer fixed, can hold the retry past expiry).
          const issued = await mppx.challenge.tempo.charge({ ...request, description })
          return verifyPaidInTime(credential, { client, secretKey, realm, recipient, amountAtomic, chainId, issued })
        }
        return explain(error, { client, credential, recipient, amountAtomic, chainId })
      }
      const hash = payload.hash.toLowerCase() as Hex
      // validateCredential matched the transfer from this sender (the credential's source, else the receipt's from).
      const payer = sourceAddress(credential.source) ?? (await receiptOf(client, hash)).from
      return {
        ok: true,
        payment: {
          hash,
          payer,
          challengeId: credential.challenge.id,
          expires: credential.challenge.expires ?? '',
          amountAtomic,
          recipient,
          currency: PATH_USD,
          chainId,
        },
      }
    },
    receiptHeader(payment, at) {
      return Receipt.serialize(Receipt.from({ method: 'tempo', reference: payment.hash, status: 'success', timestamp: at.toISOString() }))
    },
  }
}

const PUSH_ONLY =
  'This route takes MPP tempo charges in push mode only: send the pathUSD transfer (with the challenge-bound memo) yourself, then repeat the request with a credential whose payload is {type: "hash", hash}. A signed transaction (pull mode) is not broadcast here.'

function isTransactionHash(value: unknown): value is Hex {
  return typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value)
}

function readCredential(authorization: string): Credential.Credential | undefined {
  try {
    return Credential.deserialize(Credential.extractPaymentScheme(authorization) ?? authorization)
  } catch {
    return undefined
  }
}

function reject(reason: MppRejectReason, message: string): MppRejection {
  return { ok: false, reason, message }
}

type ExplainContext = {
  client: Client
  credential: Credential.Credential
  recipient: Address
  amountAtomic: bigint
  chainId: number
}

/** mppx's refusal as a stable reason and a sentence that says what to do; an RPC failure is thrown. */
async function explain(error: unknown, context: ExplainContext): Promise<MppRejection> {
  const text = error instanceof Error ? error.message : String(error)
  if (error instanceof TransactionReceiptNotFoundError)
    return reject(
      'payment_not_found',
      `No transaction with this hash has a receipt on Tempo (chain ${context.chainId}). Send the hash once the transfer is included; the credential stays usable until its challenge expires.`,
    )
  if (error instanceof Errors.PaymentExpiredError)
    return reject(
      'challenge_expired',
      'The challenge this credential answers has expired. Ask for a new one (repeat the request without Authorization).',
    )
  if (error instanceof Errors.InvalidChallengeError)
    return reject(
      'invalid_challenge',
      `The credential's challenge was not issued by this route as it is now (${firstLine(text)}). Answer a challenge from this route's latest 402.`,
    )
  if (error instanceof Errors.InvalidPayloadError || error instanceof Errors.MalformedCredentialError)
    return reject('invalid_payment', `The credential's payload is not a tempo charge payload (${firstLine(text)}).`)
  if (error instanceof Errors.PaymentError) {
    if (/not supported for this challenge/.test(text)) return reject('unsupported_mode', PUSH_ONLY)
    if (/memo is not bound/.test(text))
      return reject(
        'memo_mismatch',
        "The transfer's memo is not bound to this challenge (mppx 0.11 requires transferWithMemo with the attribution memo of this challenge's id and realm): a payment made for another challenge cannot pay this one.",
      )
    if (/no matching transfer/.test(text)) return diagnoseTransfer(context)
    if (/source is invalid/.test(text))
      return reject('invalid_payment', `The credential's source is not a did:pkh of chain ${context.chainId}.`)
    return reject('invalid_payment', firstLine(text))
  }
  if (/Transaction reverted/.test(text))
    return reject('payment_reverted', 'The transaction reverted on Tempo, so it moved nothing. Send a new transfer and its hash.')
  // A credential mppx's schema refuses (it rethrows the schema's error as it is) is the client's, not the RPC's.
  if (error instanceof Error && (error.name === '$ZodError' || error.name === 'ZodError'))
    return reject('invalid_payment', `The credential is not a tempo charge credential (${firstLine(text)}).`)
  // Anything else arose asking the RPC or reading its answer (transport, timeout, an RPC error, an answer that is not
  // what a node sends): nothing about the payment is known, so 503, and the client tries again.
  throw new TempoRpcUnavailableError(`the Tempo RPC could not verify the payment: ${firstLine(text)}`, { cause: error })
}

const EXPIRED =
  'The challenge this credential answers has expired, and no transfer bound to it was included on Tempo before it expired. Ask for a new one (repeat the request without Authorization).'

type PaidInTimeContext = {
  client: Client
  secretKey: string
  realm: string
  recipient: Address
  amountAtomic: bigint
  chainId: number
  /** A challenge issued now for the same request: the expired one must have asked for exactly what it asks. */
  issued: Challenge.Challenge
}

/**
 * A push credential whose challenge has expired, checked as mppx checks it otherwise (it refuses any expired
 * challenge before reading the chain): the challenge is ours (its HMAC) and asked what we ask now, and the
 * transaction, successful, holds a pathUSD TransferWithMemo of the amount to our recipient from the payer, with the
 * attribution memo of this realm and challenge; and its block was made before the challenge expired. A transfer made
 * after is refused as expired, as before.
 */
async function verifyPaidInTime(credential: Credential.Credential, context: PaidInTimeContext): Promise<MppVerifyOutcome> {
  const { client, secretKey, realm, recipient, amountAtomic, chainId, issued } = context
  const { challenge } = credential
  if (!Challenge.verify(challenge, { secretKey }))
    return reject(
      'invalid_challenge',
      "The credential's challenge was not issued by this route. Answer a challenge from this route's latest 402.",
    )
  const isSameAsk =
    challenge.method === issued.method &&
    challenge.intent === issued.intent &&
    challenge.realm === realm &&
    canonicalJson(challenge.request) === canonicalJson(issued.request)
  if (!isSameAsk) return reject('challenge_expired', EXPIRED)
  const hash = (credential.payload as { hash: Hex }).hash
  let receipt: Awaited<ReturnType<typeof getTransactionReceipt>>
  let blockTimeMs: number
  try {
    receipt = await getTransactionReceipt(client, { hash })
    blockTimeMs = Number((await getBlock(client, { blockNumber: receipt.blockNumber })).timestamp) * 1000
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return reject('challenge_expired', EXPIRED)
    throw new TempoRpcUnavailableError(`the Tempo RPC could not give the receipt of ${hash}`, { cause: error })
  }
  if (receipt.status !== 'success' || blockTimeMs > Date.parse(challenge.expires ?? '')) return reject('challenge_expired', EXPIRED)
  const payer = sourceAddress(credential.source) ?? receipt.from
  const serverTag = keccak256(stringToHex(realm)).slice(2, 22)
  const challengeTag = keccak256(stringToHex(challenge.id)).slice(2, 16)
  const isBound = (sent: Hex): boolean => {
    const memo = sent.toLowerCase()
    return (
      memo.length === 66 &&
      memo.slice(2, 10) === keccak256(stringToHex('mpp')).slice(2, 10) &&
      memo.slice(10, 12) === '01' &&
      memo.slice(12, 32) === serverTag &&
      memo.slice(52, 66) === challengeTag
    )
  }
  const paid = parseEventLogs({ abi: Abis.tip20, eventName: 'TransferWithMemo', logs: receipt.logs }).some(
    (log) =>
      isAddressEqual(log.address, PATH_USD) &&
      isAddressEqual(log.args.to, recipient) &&
      isAddressEqual(log.args.from, payer) &&
      log.args.amount === amountAtomic &&
      isBound(log.args.memo),
  )
  if (!paid) return reject('challenge_expired', EXPIRED)
  return {
    ok: true,
    payment: {
      hash: hash.toLowerCase() as Hex,
      payer: payer.toLowerCase() as Address,
      challengeId: challenge.id,
      expires: challenge.expires ?? '',
      amountAtomic,
      recipient,
      currency: PATH_USD,
      chainId,
    },
  }
}

/** JSON with its object keys sorted, so two requests compare by content whatever order their keys came in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === 'object' && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  )
}

/** Why no transfer matched: which of currency, recipient and amount differs, read from the same receipt. */
async function diagnoseTransfer(context: ExplainContext): Promise<MppRejection> {
  const { client, credential, recipient, amountAtomic } = context
  const hash = (credential.payload as { hash: Hex }).hash
  const receipt = await receiptOf(client, hash)
  const transfers = parseEventLogs({ abi: Abis.tip20, eventName: 'Transfer', logs: receipt.logs })
  const inPathUsd = transfers.filter((log) => isAddressEqual(log.address, PATH_USD))
  const asked = `${amountAtomic} atomic pathUSD (${PATH_USD}) to ${recipient}`
  if (inPathUsd.length === 0)
    return reject('asset_mismatch', `The transaction moved no pathUSD; this charge is ${asked}. Nothing was charged by us.`)
  const toUs = inPathUsd.filter((log) => isAddressEqual(log.args.to, recipient))
  // mppx matches the transfer from the credential's source (without one, from the transaction's sender): one of the
  // right amount from someone else is not it.
  const source = sourceAddress(credential.source)
  const payer = source ?? receipt.from
  const paidBy = toUs.filter((log) => log.args.amount === amountAtomic).map((log) => log.args.from)
  if (paidBy.length > 0 && !paidBy.some((from) => isAddressEqual(from, payer)))
    return reject(
      'payer_mismatch',
      `The transfer of ${amountAtomic} atomic pathUSD to ${recipient} was sent by ${[...new Set(paidBy)].join(', ')}, not by ${source === undefined ? `the transaction's sender ${payer} (the credential names no source)` : `the credential's source ${source}`}: send the credential with the source that made the transfer.`,
    )
  if (toUs.length > 0) {
    const paid = toUs.map((log) => String(log.args.amount)).join(', ')
    return reject('amount_mismatch', `The transfer to ${recipient} was ${paid} atomic pathUSD; this charge is exactly ${amountAtomic}.`)
  }
  const paidTo = [...new Set(inPathUsd.map((log) => log.args.to))].join(', ')
  return reject('recipient_mismatch', `The pathUSD went to ${paidTo}; this charge is ${asked}.`)
}

async function receiptOf(client: Client, hash: Hex): Promise<Awaited<ReturnType<typeof getTransactionReceipt>>> {
  try {
    return await getTransactionReceipt(client, { hash })
  } catch (error) {
    throw new TempoRpcUnavailableError(`the Tempo RPC could not give the receipt of ${hash}`, { cause: error })
  }
}

/** The address of a `did:pkh:eip155:<chain>:<address>` source. */
function sourceAddress(source: string | undefined): Address | undefined {
  const match = /^did:pkh:eip155:\d+:(0x[0-9a-fA-F]{40})$/.exec(source ?? '')
  return match?.[1] === undefined ? undefined : (match[1].toLowerCase() as Address)
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text
}

/** mppx's store, never written by the rail's verification path (see TempoCharge): any write is a bug, and says so. */
function refusingStore(): Parameters<typeof tempo.charge>[0] extends infer P
  ? P extends { store?: infer S }
    ? NonNullable<S>
    : never
  : never {
  const refuse = (): Promise<never> =>
    Promise.reject(new Error('the MPP rail claims payments in the swap record (createMppPaymentStore), never in the mppx store'))
  return { get: refuse, put: refuse, delete: refuse, update: refuse }
}
