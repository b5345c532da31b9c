import { Agent, type Dispatcher } from 'undici'
import { type Hex, isHex } from 'viem'
import * as z from 'zod'

/** Circle's attestation service (Iris), mainnet. */
export const CIRCLE_ATTESTATION_URL = 'https://iris-api.circle.com'

/**
 * One message of Circle's `GET /v2/messages/{sourceDomain}?transactionHash=` answer, as much of it as the relayer
 * reads. While it is not attested, `status` is `pending_confirmations` and `attestation` is the word `PENDING`
 * (and `message` may still lack the nonce Circle assigns at attestation), so only a `complete` message is relayed.
 */
const IrisMessage = z.object({
  message: z.string().nullish(),
  attestation: z.string().nullish(),
  eventNonce: z.string().nullish(),
  status: z.string(),
  cctpVersion: z.number().nullish(),
  delayReason: z.string().nullish(),
})
const IrisMessages = z.object({ messages: z.array(IrisMessage) })

/** A message Circle attested: what `receiveMessage` (through our executor's `relayCctp`) takes. */
export type AttestedMessage = { message: Hex; attestation: Hex; eventNonce: string | null }

/** Where one source transaction's messages stand, in log order (Circle orders them by log index). */
export type AttestationLookup =
  /** Not indexed yet (Circle answers 404 until it has seen the burn): normal for a while after the burn. */
  { state: 'not_found' } | { state: 'pending'; delayReason: string | null } | { state: 'complete'; messages: AttestedMessage[] }

/** The service could not be asked (transport error, timeout, 5xx, 429) within the bounded retries, or answered nonsense. */
export class AttestationServiceError extends Error {
  override name = 'AttestationServiceError'
}

export type AttestationClientParameters = {
  /** Default CIRCLE_ATTESTATION_URL. `/v2/messages/{sourceDomain}` is appended. */
  url?: string
  /** Default: an undici Agent of its own, keep-alive, with the timeouts below. */
  dispatcher?: Dispatcher
  /** Per request: connecting, then the headers, then the body. Default 10 000 each. */
  timeoutMs?: number
  /** Attempts of one lookup before it fails, on a transport error, a timeout, 429 or 5xx. Default 3. */
  attempts?: number
  /** Waits between polls: the first, multiplied by 1.5 each time up to the cap. Default 2 000 and 30 000. */
  pollMs?: { firstMs: number; maxMs: number }
  /**
   * The most requests a second this client sends, however many swaps wait: Circle limits the API to 35 a second and
   * blocks a caller that exceeds it for 5 minutes. Default 10.
   */
  maxRequestsPerSecond?: number
  /** Tests: the waits between attempts and polls, and the clock the request rate is kept by. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  now?: () => number
}

export type AttestationClient = {
  /** One lookup (retried within `attempts`); throws AttestationServiceError when the service cannot answer. */
  lookup(sourceDomain: number, transactionHash: Hex, signal?: AbortSignal): Promise<AttestationLookup>
  /**
   * Polls with backoff until every message of the transaction is attested, then returns them; rejects when
   * `deadlineMs` (epoch ms) passes first, or `signal` aborts. A failed lookup is retried at the next poll.
   */
  waitForAttestation(
    sourceDomain: number,
    transactionHash: Hex,
    options: { deadlineMs: number; now?: () => number; signal?: AbortSignal },
  ): Promise<AttestedMessage[]>
  close(): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 10_000
const DEFAULT_ATTEMPTS = 3
const DEFAULT_POLL = { firstMs: 2_000, maxMs: 30_000 }
const DEFAULT_MAX_REQUESTS_PER_SECOND = 10
/** Between attempts of one lookup: short, the poll's own backoff handles longer outages. */
const RETRY_DELAY_MS = 500
/** A body larger than this is not an answer about one transaction. */
const MAX_BODY_BYTES = 1_000_000

/** A client of Circle's CCTP v2 attestation API (or a service answering in its shape, such as a local stand-in). */
export function createAttestationClient(parameters: AttestationClientParameters = {}): AttestationClient {
  const baseUrl = (parameters.url ?? CIRCLE_ATTESTATION_URL).replace(/\/+$/, '')
  const timeoutMs = parameters.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const ownAgent =
    parameters.dispatcher === undefined
      ? new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 30_000 })
      : undefined
  const dispatcher = parameters.dispatcher ?? (ownAgent as Dispatcher)
  const attempts = parameters.attempts ?? DEFAULT_ATTEMPTS
  const poll = parameters.pollMs ?? DEFAULT_POLL
  const sleep = parameters.sleep ?? abortableSleep
  const now = parameters.now ?? Date.now
  const spacingMs = 1000 / (parameters.maxRequestsPerSecond ?? DEFAULT_MAX_REQUESTS_PER_SECOND)
  /** When the next request may leave: each request takes the next slot, so they go out evenly spaced. */
  let nextSlotMs = 0

  async function waitForSlot(signal?: AbortSignal): Promise<void> {
    const at = Math.max(now(), nextSlotMs)
    nextSlotMs = at + spacingMs
    const waitMs = at - now()
    if (waitMs > 0) await sleep(waitMs, signal)
  }

  async function once(sourceDomain: number, transactionHash: Hex, signal?: AbortSignal): Promise<AttestationLookup | 'retry'> {
    const path = `/v2/messages/${sourceDomain}?transactionHash=${transactionHash}`
    await waitForSlot(signal)
    let statusCode: number
    let text: string
    try {
      const response = await dispatcher.request({
        origin: new URL(baseUrl).origin,
        path: `${new URL(baseUrl).pathname.replace(/\/$/, '')}${path}`,
        method: 'GET',
        headers: { accept: 'application/json' },
        ...(signal === undefined ? {} : { signal }),
      })
      statusCode = response.statusCode
      text = await readBounded(response.body)
    } catch (error) {
      if (signal?.aborted) throw error
      return 'retry'
    }
    if (statusCode === 404) return { state: 'not_found' }
    if (statusCode === 429 || statusCode >= 500) return 'retry'
    if (statusCode !== 200) throw new AttestationServiceError(`the attestation service answered HTTP ${statusCode} for ${transactionHash}`)
    return lookupOf(text, transactionHash)
  }

  const client: AttestationClient = {
    async lookup(sourceDomain, transactionHash, signal) {
      for (let attempt = 1; ; attempt++) {
        const answer = await once(sourceDomain, transactionHash, signal)
        if (answer !== 'retry') return answer
        if (attempt >= attempts)
          throw new AttestationServiceError(
            `the attestation service at ${baseUrl} could not be reached for ${transactionHash} (${attempts} attempts)`,
          )
        await sleep(RETRY_DELAY_MS * attempt, signal)
      }
    },

    async waitForAttestation(sourceDomain, transactionHash, options) {
      const now = options.now ?? Date.now
      let waitMs = poll.firstMs
      let lastProblem = 'not indexed yet'
      for (;;) {
        try {
          const found = await client.lookup(sourceDomain, transactionHash, options.signal)
          if (found.state === 'complete') return found.messages
          lastProblem = found.state === 'pending' ? `pending (${found.delayReason ?? 'awaiting confirmations'})` : 'not indexed yet'
        } catch (error) {
          if (options.signal?.aborted) throw error
          lastProblem = error instanceof Error ? error.message : String(error)
        }
        const left = options.deadlineMs - now()
        if (left <= 0)
          throw new AttestationServiceError(`no attestation for ${transactionHash} on domain ${sourceDomain} in time: ${lastProblem}`)
        await sleep(Math.min(waitMs, left), options.signal)
        waitMs = Math.min(Math.ceil(waitMs * 1.5), poll.maxMs)
      }
    },

    async close() {
      await ownAgent?.close()
    },
  }
  return client
}

/** The answer as a lookup: complete only when every message of the transaction is attested. */
function lookupOf(text: string, transactionHash: Hex): AttestationLookup {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new AttestationServiceError(`the attestation service's answer for ${transactionHash} is not JSON`)
  }
  const parsed = IrisMessages.safeParse(json)
  if (!parsed.success || parsed.data.messages.length === 0)
    throw new AttestationServiceError(`the attestation service's answer for ${transactionHash} has no messages`)
  const messages: AttestedMessage[] = []
  for (const entry of parsed.data.messages) {
    const { message, attestation } = entry
    if (entry.status !== 'complete' || !isSignedHex(attestation) || !isSignedHex(message))
      return { state: 'pending', delayReason: entry.delayReason ?? null }
    messages.push({ message, attestation, eventNonce: entry.eventNonce ?? null })
  }
  return { state: 'complete', messages }
}

const isSignedHex = (value: string | null | undefined): value is Hex =>
  typeof value === 'string' && value.length > 2 && isHex(value, { strict: true })

async function readBounded(body: AsyncIterable<Buffer | Uint8Array | string>): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk)
    size += buffer.length
    if (size > MAX_BODY_BYTES) throw new AttestationServiceError(`the attestation service's answer exceeds ${MAX_BODY_BYTES} bytes`)
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
