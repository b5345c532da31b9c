import { PassThrough } from 'node:stream'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { StdioLineTransport } from '../../src/mcp/stdioLineTransport.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

/** A transport over two pipes: what it delivers, and each line it writes, parsed. */
async function transportOn(maxLineBytes?: number) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const transport = new StdioLineTransport(stdin, stdout, maxLineBytes)
  const delivered: JSONRPCMessage[] = []
  transport.onmessage = (message) => delivered.push(message)
  let written = ''
  stdout.setEncoding('utf8')
  stdout.on('data', (chunk: string) => {
    written += chunk
  })
  await transport.start()
  const answers = async (): Promise<unknown[]> => {
    await new Promise((resolve) => setImmediate(resolve))
    return written
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown)
  }
  return { stdin, transport, delivered, answers }
}

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' })

describe('StdioLineTransport: every line a host sends is delivered or answered', () => {
  it('delivers JSON-RPC messages, split across chunks or sharing one, with CRLF or LF', async () => {
    const { stdin, delivered, answers } = await transportOn()
    const text = `${JSON.stringify(ping(1))}\r\n${JSON.stringify(ping(2))}\n\n`
    stdin.write(text.slice(0, 10))
    stdin.write(text.slice(10))
    expect(await answers()).toEqual([])
    expect(delivered).toEqual([ping(1), ping(2)])
  })

  it('answers a line that is not JSON -32700, and a JSON value that is not a message -32600 (by its id where it has one)', async () => {
    const { stdin, delivered, answers } = await transportOn()
    stdin.write('{not json\n[]\nnull\n5\n"x"\n{"id": 9, "method": 4}\n')
    stdin.write(`${JSON.stringify(ping(3))}\n`)
    const written = (await answers()) as { id: unknown; error: { code: number; message: string } }[]
    expect(written.map(({ id, error }) => [id, error.code])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [9, -32600],
    ])
    expect(written[0]?.error.message).toMatch(/^Parse error: the line is not JSON \(.+\); send one JSON-RPC message per line$/)
    for (const line of written) expect(line).toMatchObject({ jsonrpc: '2.0' })
    expect(delivered).toEqual([ping(3)])
  })

  it('answers each request of a batch by its id (batching is not taken), so a host waiting on them is not left hanging', async () => {
    const { stdin, delivered, answers } = await transportOn()
    stdin.write(`${JSON.stringify([ping(6), { jsonrpc: '2.0', method: 'notifications/initialized' }, ping(7)])}\n`)
    const written = (await answers()) as { id: unknown; error: { code: number; message: string } }[]
    expect(written.map(({ id, error }) => [id, error.code])).toEqual([
      [6, -32600],
      [7, -32600],
    ])
    expect(written[0]?.error.message).toContain('send each message on its own line')
    expect(delivered).toEqual([])
  })

  it('skips a line longer than its limit to its end, answers it once, and reads the next line', async () => {
    const { stdin, delivered, answers } = await transportOn(64)
    stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(50)}`)
    stdin.write('x'.repeat(200))
    stdin.write(`"}}\n${JSON.stringify(ping(2))}\n`)
    const written = (await answers()) as { id: unknown; error: { code: number; message: string } }[]
    expect(written).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: a message longer than 64 bytes is not read; it is skipped to its end' },
      },
    ])
    expect(delivered).toEqual([ping(2)])
  })

  it('refuses a line over the limit that ends in the chunk that takes it past the limit, too', async () => {
    const { stdin, delivered, answers } = await transportOn(64)
    stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(30)}`)
    stdin.write(`${'x'.repeat(40)}"}}\n${JSON.stringify(ping(2))}\n`)
    expect(((await answers()) as { id: unknown }[]).map(({ id }) => id)).toEqual([null])
    expect(delivered).toEqual([ping(2)])
  })

  it("answers a malformed response without its id (the id is the host's own request's), and reads on when a handler throws", async () => {
    const { stdin, transport, answers } = await transportOn()
    const seen: unknown[] = []
    const errors: string[] = []
    transport.onmessage = (message) => {
      seen.push(message)
      if (seen.length === 1) throw new Error('handler failed')
    }
    transport.onerror = (error) => errors.push(error.message)
    stdin.write(`{"jsonrpc":"2.0","id":4,"result":5,"error":{}}\n${JSON.stringify(ping(5))}\n${JSON.stringify(ping(6))}\n`)
    expect(((await answers()) as { id: unknown; error: { code: number } }[]).map(({ id, error }) => [id, error.code])).toEqual([
      [null, -32600],
    ])
    expect(seen).toEqual([ping(5), ping(6)])
    expect(errors).toEqual(['handler failed'])
  })
})

describe('swapeazi mcp over stdio: malformed lines', () => {
  it('answers them and goes on serving: a ping after them is answered', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    let written = ''
    stdout.setEncoding('utf8')
    stdout.on('data', (chunk: string) => {
      written += chunk
    })
    const exited = runCli(['mcp'], {
      env: { SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_LOG_LEVEL: 'silent' },
      stdin,
      stdout,
      stderr: new TextSink(),
      pgliteTemplate: await migratedPgliteTemplate(),
    })
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
    }
    stdin.write(`${JSON.stringify(initialize)}\n{not json\n${JSON.stringify([ping(6), ping(7)])}\n${JSON.stringify(ping(8))}\n`)
    const deadline = Date.now() + 60_000
    while (!written.includes('"id":8') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    stdin.end()
    expect(await exited).toBe(0)
    const lines = written
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: unknown; result?: unknown; error?: { code: number } })
    // The refusals are written as the lines are read; the answers of requests as they finish.
    const key = (entry: [unknown, unknown]) => JSON.stringify(entry)
    const answered = lines.map(({ id, error }): [unknown, unknown] => [id, error?.code ?? 'result'])
    expect(answered.sort((a, b) => key(a).localeCompare(key(b)))).toEqual([
      [1, 'result'],
      [6, -32600],
      [7, -32600],
      [8, 'result'],
      [null, -32700],
    ])
  }, 90_000)
})
