import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessFetch } from '../../src/mcp/serviceClient.ts'
import { quoteBody, testApp } from '../http/testApp.ts'
import { type ConnectedClient, callTool, clientOver, connectInMemory, TOOL_NAMES, textOf } from './mcpHarness.ts'

// The SDK dropped arguments a tool does not declare, so get_quote with `recipient` quoted to the sender and
// build_swap would have built (and paid for) a swap to the sender. Unknown arguments are refused before the tool runs.
const app = testApp()
const requests: string[] = []
let connected: ConnectedClient

beforeAll(async () => {
  const client = clientOver(
    inProcessFetch((request) => {
      requests.push(new URL(request.url).pathname)
      return app.fetch(request)
    }),
  )
  connected = await connectInMemory({ client, callerPays: true })
})
afterAll(() => connected.close())

describe('MCP tools refuse arguments they do not take', () => {
  it('every tool lists additionalProperties: false', async () => {
    const { tools } = await connected.client.listTools()
    expect(tools.map((tool) => [tool.name, tool.inputSchema.additionalProperties])).toEqual(TOOL_NAMES.map((name) => [name, false]))
  })

  it.each(['get_quote', 'build_swap'])('%s with `recipient`: isError naming toAddress, and SwapEazi is never called', async (name) => {
    requests.length = 0
    const result = await callTool(connected.client, name, quoteBody({ recipient: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }))
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('the arguments have an unknown field "recipient" (did you mean toAddress?)')
    expect(requests).toEqual([])
  })

  it('get_quote to the zero address: the service refuses it, naming toAddress', async () => {
    const result = await callTool(connected.client, 'get_quote', quoteBody({ toAddress: '0x0000000000000000000000000000000000000000' }))
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('toAddress is the zero address: the router refuses it')
  })

  it('the arguments a tool takes still pass', async () => {
    const result = await callTool(connected.client, 'get_quote', quoteBody({ ranked: true }))
    expect(result.isError).toBeFalsy()
  })
})
