// The attestation client against a scripted HTTP server in Circle's v2 shape: what it waits out (404, pending, a
// transient 503), how many times it asks, and what it refuses.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Hex } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { AttestationServiceError, createAttestationClient } from '../../src/lifecycle/attestationClient.ts'

const TX: Hex = `0x${'ab'.repeat(32)}`
const complete = { message: '0x0102', attestation: '0xa1a2', eventNonce: '0x09', cctpVersion: 2, status: 'complete', delayReason: null }
const pending = {
  message: '0x',
  attestation: 'PENDING',
  eventNonce: null,
  cctpVersion: 2,
  status: 'pending_confirmations',
  delayReason: null,
}

type Answer = { status: number; body?: unknown; raw?: string }
let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

/** Serves the answers in turn (the last one again once they run out); records each request's path. */
async function serve(answers: Answer[]): Promise<{ url: string; paths: string[]; sockets: Set<unknown> }> {
  const paths: string[] = []
  const sockets = new Set<unknown>()
  let next = 0
  server = createServer((request: IncomingMessage, response) => {
    paths.push(request.url ?? '')
    sockets.add(request.socket)
    const answer = answers[Math.min(next++, answers.length - 1)]!
    response.writeHead(answer.status, { 'content-type': 'application/json' })
    response.end(answer.raw ?? JSON.stringify(answer.body ?? {}))
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`, paths, sockets }
}

const noWait = async (): Promise<void> => {}
/** A few milliseconds: long enough for the connection to return to the pool between two requests. */
const shortWait = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10))

describe('createAttestationClient', () => {
  it('polls through 404, a transient 503 and pending until complete, on one keep-alive connection', async () => {
    const stand = await serve([
      { status: 404, body: { error: 'Message not found' } },
      { status: 503 },
      { status: 200, body: { messages: [pending] } },
      { status: 200, body: { messages: [complete] } },
    ])
    const client = createAttestationClient({ url: stand.url, sleep: shortWait })
    try {
      const messages = await client.waitForAttestation(6, TX, { deadlineMs: Date.now() + 60_000 })
      expect(messages).toEqual([{ message: '0x0102', attestation: '0xa1a2', eventNonce: '0x09' }])
      expect(stand.paths).toEqual(Array(4).fill(`/v2/messages/6?transactionHash=${TX}`))
      expect(stand.sockets.size).toBe(1)
    } finally {
      await client.close()
    }
  })

  it('gives up a lookup after its bounded attempts, and a wait at its deadline, naming why', async () => {
    const stand = await serve([{ status: 500 }])
    const client = createAttestationClient({ url: stand.url, attempts: 3, sleep: noWait })
    try {
      await expect(client.lookup(6, TX)).rejects.toThrow(
        new AttestationServiceError(
          `the attestation service at ${stand.url.replace(/\/$/, '')} could not be reached for ${TX} (3 attempts)`,
        ),
      )
      expect(stand.paths).toHaveLength(3)
      let now = 0
      await expect(client.waitForAttestation(6, TX, { deadlineMs: 10, now: () => (now += 4) })).rejects.toThrow(
        /no attestation for 0xabab.* on domain 6 in time: the attestation service .* could not be reached/,
      )
    } finally {
      await client.close()
    }
  })

  it('treats a message not yet signed as pending, and refuses answers that are not Circle’s shape', async () => {
    const stand = await serve([
      { status: 200, body: { messages: [complete, pending] } },
      { status: 200, body: { messages: [{ ...complete, attestation: 'PENDING' }] } },
      { status: 200, raw: 'not json' },
      { status: 200, body: { messages: [] } },
      { status: 400, body: { error: 'Invalid domain' } },
    ])
    const client = createAttestationClient({ url: stand.url, sleep: noWait })
    try {
      expect(await client.lookup(6, TX)).toEqual({ state: 'pending', delayReason: null })
      expect(await client.lookup(6, TX)).toEqual({ state: 'pending', delayReason: null })
      await expect(client.lookup(6, TX)).rejects.toThrow(/is not JSON/)
      await expect(client.lookup(6, TX)).rejects.toThrow(/has no messages/)
      await expect(client.lookup(6, TX)).rejects.toThrow(/answered HTTP 400/)
    } finally {
      await client.close()
    }
  })

  it("spaces its requests to stay under Circle's rate limit, however many lookups run at once", async () => {
    const stand = await serve([{ status: 200, body: { messages: [complete] } }])
    let clock = 1_000_000
    const waits: number[] = []
    const client = createAttestationClient({
      url: stand.url,
      maxRequestsPerSecond: 4,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    try {
      await Promise.all(Array.from({ length: 5 }, () => client.lookup(6, TX)))
      // The first leaves at once; each next one waits for its own slot, 250 ms after the previous one.
      expect(waits).toEqual([250, 500, 750, 1000])
      clock += 2_000
      await client.lookup(6, TX)
      expect(waits).toHaveLength(4)
    } finally {
      await client.close()
    }
  })
})
