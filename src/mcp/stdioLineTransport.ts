import type { Readable, Writable } from 'node:stream'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'

/** The longest line read as one message, as the SDK's own stdio transport allows. */
export const MAX_LINE_BYTES = 10 * 2 ** 20

const NEWLINE = 0x0a

/**
 * MCP's stdio transport: one JSON-RPC message per line on `stdin`, answers on `stdout`. It reads as the SDK's
 * StdioServerTransport does, and answers what that one drops in silence, so a host never waits on a request nobody
 * will answer: a line that is not JSON is -32700 (parse error); a JSON value that is not a JSON-RPC message is -32600
 * (invalid request), with the value's `id` where it has one; a batch (MCP 2025-06-18 removed JSON-RPC batching) is
 * -32600 for each request in it, by its id; a line longer than MAX_LINE_BYTES is skipped to its end and answered
 * -32600, where the SDK's transport closes.
 */
export class StdioLineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  readonly #stdin: Readable
  readonly #stdout: Writable
  readonly #maxLineBytes: number
  #pending: Buffer[] = []
  #pendingBytes = 0
  /** Inside a line already refused for its length: everything up to its newline is dropped. */
  #isSkipping = false
  #isClosed = false

  constructor(stdin: Readable, stdout: Writable, maxLineBytes = MAX_LINE_BYTES) {
    this.#stdin = stdin
    this.#stdout = stdout
    this.#maxLineBytes = maxLineBytes
  }

  async start(): Promise<void> {
    this.#stdin.on('data', this.#onData)
    this.#stdin.on('error', this.#onError)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message)
  }

  async close(): Promise<void> {
    this.#isClosed = true
    this.#stdin.off('data', this.#onData)
    this.#stdin.off('error', this.#onError)
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause()
    this.#pending = []
    this.#pendingBytes = 0
    this.onclose?.()
  }

  readonly #onError = (error: Error): void => {
    this.onerror?.(error)
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    let start = 0
    for (let end = bytes.indexOf(NEWLINE); end !== -1 && !this.#isClosed; end = bytes.indexOf(NEWLINE, start)) {
      const part = bytes.subarray(start, end)
      start = end + 1
      if (this.#isSkipping) {
        this.#isSkipping = false
        continue
      }
      if (this.#pendingBytes + part.length > this.#maxLineBytes) {
        this.#refuseTooLong()
        this.#isSkipping = false
        continue
      }
      const line = this.#pending.length === 0 ? part : Buffer.concat([...this.#pending, part])
      this.#pending = []
      this.#pendingBytes = 0
      this.#readLine(line.toString('utf8').replace(/\r$/, ''))
    }
    if (start >= bytes.length || this.#isSkipping || this.#isClosed) return
    const rest = bytes.subarray(start)
    if (this.#pendingBytes + rest.length > this.#maxLineBytes) {
      this.#refuseTooLong()
      return
    }
    this.#pendingBytes += rest.length
    this.#pending.push(rest)
  }

  /** A line over the limit: answered once, and what is left of it up to its newline dropped unread. */
  #refuseTooLong(): void {
    this.#pending = []
    this.#pendingBytes = 0
    this.#isSkipping = true
    this.#refuse(
      null,
      ErrorCode.InvalidRequest,
      `Invalid Request: a message longer than ${this.#maxLineBytes} bytes is not read; it is skipped to its end`,
    )
  }

  #readLine(line: string): void {
    if (line.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error)
      this.#refuse(null, ErrorCode.ParseError, `Parse error: the line is not JSON (${why}); send one JSON-RPC message per line`)
      return
    }
    if (Array.isArray(value)) {
      const ids = value.map(idOf).filter((id) => id !== null)
      const why = 'Invalid Request: a batch is not taken (MCP 2025-06-18 removed JSON-RPC batching); send each message on its own line'
      if (ids.length === 0) this.#refuse(null, ErrorCode.InvalidRequest, why)
      for (const id of ids) this.#refuse(id, ErrorCode.InvalidRequest, why)
      return
    }
    const parsed = JSONRPCMessageSchema.safeParse(value)
    if (!parsed.success) {
      this.#refuse(
        idOf(value),
        ErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message (an object with jsonrpc "2.0" and a method, or a result or error for an id)',
      )
      return
    }
    try {
      this.onmessage?.(parsed.data)
    } catch (error) {
      // The next lines are still read: what one message's handler throws is reported, as the SDK's transport does.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)))
    }
  }

  /** An error answer the SDK's types cannot spell (its id may be null, as JSON-RPC 2.0 requires where none is known). */
  #refuse(id: string | number | null, code: number, message: string): void {
    this.#write({ jsonrpc: '2.0', id, error: { code, message } }).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    )
  }

  #write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.#stdout.once('drain', resolve)
    })
  }
}

/**
 * The id of a request a host may be waiting on: the string or number `id` of an object with a `method`, else null.
 * A response's id is the other side's (its own request's): an error answered by it would be matched to that.
 */
function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || !('id' in value) || !('method' in value)) return null
  const { id } = value as { id: unknown }
  return typeof id === 'string' || typeof id === 'number' ? id : null
}
