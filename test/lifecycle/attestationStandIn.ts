// A local stand-in for Circle's attestation service (Iris): `GET /v2/messages/{sourceDomain}?transactionHash=` in
// the v2 shape, served from what it sees on the source anvil chains. Unknown transactions are 404, as Circle's are
// until it has indexed the burn; a burn is `pending_confirmations` (attestation "PENDING", the message with the
// empty nonce the source chain emits) for its first `pendingPolls` lookups, then `complete` with the message as the
// destination receives it and the test attester's signature over it.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Hex, isHash, parseEventLogs } from 'viem'
import type { AnvilInstance } from '../chain/anvil.ts'
import {
  attestCctpMessage,
  cctpMessageFromDepositForBurn,
  type DepositForBurnLog,
  decodeCctpMessage,
  depositForBurnEvent,
  TEST_CCTP_ATTESTER_KEY,
} from '../chain/cctpMessage.ts'

export type AttestationStandInOptions = {
  /** The source chains it watches, by CCTP domain. */
  chains: ReadonlyMap<number, AnvilInstance>
  /** Lookups of a transaction answered `pending_confirmations` before it is `complete`. Default 1. */
  pendingPolls?: number
  /** Default: the test attester, whom the stand-in transmitters trust. */
  attesterKey?: Hex
}

export type AttestationStandIn = {
  url: string
  /** Every lookup received, in order: the domain and the transaction hash asked for. */
  requests: { domain: number; transactionHash: string }[]
  /** The next `count` requests are answered with `status` (e.g. 503), whatever they ask. */
  failNext(count: number, status: number): void
  close(): Promise<void>
}

const EMPTY_NONCE: Hex = `0x${'0'.repeat(64)}`

export async function startAttestationStandIn(options: AttestationStandInOptions): Promise<AttestationStandIn> {
  const pendingPolls = options.pendingPolls ?? 1
  const attesterKey = options.attesterKey ?? TEST_CCTP_ATTESTER_KEY
  const lookups = new Map<string, number>()
  const requests: AttestationStandIn['requests'] = []
  let failures: { count: number; status: number } = { count: 0, status: 503 }

  async function answer(domain: number, transactionHash: string): Promise<{ status: number; body: unknown }> {
    const chain = options.chains.get(domain)
    if (chain === undefined || !isHash(transactionHash)) return { status: 400, body: { error: 'Invalid domain or transaction hash' } }
    let receipt: Awaited<ReturnType<AnvilInstance['publicClient']['getTransactionReceipt']>>
    try {
      receipt = await chain.publicClient.getTransactionReceipt({ hash: transactionHash })
    } catch {
      return { status: 404, body: { error: 'Message not found' } }
    }
    const burns = parseEventLogs({ abi: [depositForBurnEvent], logs: receipt.logs })
    if (burns.length === 0) return { status: 404, body: { error: 'Message not found' } }
    const seen = (lookups.get(transactionHash) ?? 0) + 1
    lookups.set(transactionHash, seen)
    const isComplete = seen > pendingPolls
    const messages = []
    for (const log of burns) {
      // Circle keeps the most the burn allows (the quote's delivery); the nonce it assigns is unique per message.
      const message = cctpMessageFromDepositForBurn(
        { address: log.address, args: log.args as DepositForBurnLog['args'], transactionHash, logIndex: log.logIndex },
        { sourceDomain: domain, feeExecuted: log.args.maxFee },
      )
      const fields = decodeCctpMessage(message)
      if (!isComplete) {
        messages.push({
          message: `0x${message.slice(2, 2 + 24)}${EMPTY_NONCE.slice(2)}${message.slice(2 + 24 + 64)}`,
          eventNonce: null,
          attestation: 'PENDING',
          cctpVersion: 2,
          status: 'pending_confirmations',
          delayReason: null,
        })
        continue
      }
      messages.push({
        message,
        eventNonce: fields.nonce,
        attestation: await attestCctpMessage(message, attesterKey),
        decodedMessage: {
          sourceDomain: String(fields.sourceDomain),
          destinationDomain: String(fields.destinationDomain),
          nonce: fields.nonce,
          sender: fields.sender,
          recipient: fields.recipient,
          destinationCaller: fields.destinationCaller,
          minFinalityThreshold: String(fields.minFinalityThreshold),
          finalityThresholdExecuted: String(fields.finalityThresholdExecuted),
          decodedMessageBody: {
            burnToken: fields.burnToken,
            mintRecipient: fields.mintRecipient,
            amount: String(fields.amount),
            messageSender: fields.messageSender,
            maxFee: String(fields.maxFee),
            feeExecuted: String(fields.feeExecuted),
            expirationBlock: String(fields.expirationBlock),
            hookData: fields.hookData,
          },
        },
        cctpVersion: 2,
        status: 'complete',
        delayReason: null,
      })
    }
    return { status: 200, body: { messages } }
  }

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stand-in')
    const match = /^\/v2\/messages\/(\d+)$/.exec(url.pathname)
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(body))
    }
    if (request.method !== 'GET' || match === null) return send(404, { error: 'Not found' })
    const domain = Number(match[1])
    const transactionHash = url.searchParams.get('transactionHash') ?? ''
    requests.push({ domain, transactionHash })
    if (failures.count > 0) {
      failures = { ...failures, count: failures.count - 1 }
      return send(failures.status, { error: 'stand-in failure' })
    }
    answer(domain, transactionHash.toLowerCase()).then(
      ({ status, body }) => send(status, body),
      () => send(500, { error: 'stand-in error' }),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(count, status) {
      failures = { count, status }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
