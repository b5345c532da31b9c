import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { getAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { DEFAULT_ROUTER_ADDRESS } from '../../src/contracts/deployRouter.ts'
import { TransactionRequestWire } from '../../src/schemas/swap.ts'
import { PaymentReceipt } from '../../src/schemas/x402.ts'
import { runAgentDemo } from '../../scripts/agentDemo.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const RUN_TIMEOUT_MS = 120_000

const Receipt = z.object({ ...PaymentReceipt.shape, success: z.literal(true) })

/**
 * The flow of `npm run demo` (scripts/agentDemo.ts) in this process: what it prints. scripts/demo.ts adds only the
 * process around it (stdout, and exit 1 with "demo failed: …" when the flow rejects, which fails this test too).
 */
async function runDemo(): Promise<string> {
  let stdout = ''
  await runAgentDemo(
    (line = '') => {
      stdout += `${line}\n`
    },
    { pgliteTemplate: await migratedPgliteTemplate() },
  )
  return stdout
}

/** The JSON object printed under the line that starts with `heading`. */
function jsonAfter(stdout: string, heading: string): unknown {
  const start = stdout.split('\n').findIndex((line) => line.startsWith(heading))
  if (start < 0) throw new Error(`no "${heading}" in the demo's output:\n${stdout}`)
  const lines = stdout.split('\n').slice(start + 1)
  const block = lines
    .slice(
      0,
      lines.findIndex((line) => line.trim() === ''),
    )
    .join('\n')
  return JSON.parse(block.slice(block.indexOf('{'), block.lastIndexOf('}') + 1))
}

describe('npm run demo', () => {
  it('is the script scripts/demo.ts', async () => {
    const { scripts } = JSON.parse(await readFile(new URL('package.json', `file://${REPO_ROOT}`), 'utf8')) as {
      scripts: Record<string, string>
    }
    expect(scripts['demo']).toBe('tsx scripts/demo.ts')
  })

  it(
    'runs the agent flow over MCP, pays build_swap from a throwaway wallet and prints a transaction to the router',
    async () => {
      const stdout = await runDemo()

      const steps = [...stdout.matchAll(/^(\d)\. ([a-z_]+) \{/gm)].map((match) => `${match[1]} ${match[2]}`)
      expect(steps).toEqual(['1 discover_routes', '2 probe_corridor', '3 get_quote', '4 build_swap'])

      const ref = /^Swap (swp_[0-9A-Z]{26})$/m.exec(stdout)?.[1]
      expect(ref).toBeDefined()

      const transaction = TransactionRequestWire.parse(jsonAfter(stdout, 'transactionRequest'))
      expect(transaction.to).toBe(getAddress(DEFAULT_ROUTER_ADDRESS))
      expect(transaction.chainId).toBe(8453)
      expect(transaction.data.length).toBeGreaterThan(10)

      const receipt = Receipt.parse(jsonAfter(stdout, 'Payment receipt'))
      // Ledger settlement records the payment under the swap's reference; the payer is the demo's wallet.
      expect(receipt.transaction).toBe(`ledger:${ref}`)
      expect(receipt.payer).toBe(transaction.from)
      expect(stdout).toMatch(/Budget: 0\.02 of 1(\.00)? USDC spent today/)
    },
    RUN_TIMEOUT_MS,
  )
})
