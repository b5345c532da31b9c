import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { getAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { DEFAULT_ROUTER_ADDRESS } from '../../src/contracts/deployRouter.ts'
import { TransactionRequestWire } from '../../src/schemas/swap.ts'
import { PaymentReceipt } from '../../src/schemas/x402.ts'
import { trackChildProcess } from '../support/trackChildProcess.ts'

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const RUN_TIMEOUT_MS = 120_000

const Receipt = z.object({ ...PaymentReceipt.shape, success: z.literal(true) })

type Run = { code: number | null; stdout: string; stderr: string }

/** `npm run demo` without npm in between (`node --import tsx`, as the script's `tsx` does), so a stuck run can be killed. */
async function runDemo(): Promise<Run> {
  const env: Record<string, string> = {}
  // Only what a shell passes on: the demo must not depend on a developer's SWAPEAZI_* settings.
  for (const name of ['PATH', 'HOME', 'TMPDIR']) if (process.env[name] !== undefined) env[name] = process.env[name]
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const { exited, stop } = trackChildProcess(child, 5_000)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const timer = setTimeout(() => void stop(), RUN_TIMEOUT_MS - 10_000)
  await exited
  clearTimeout(timer)
  return { code: child.exitCode, stdout, stderr }
}

/** The JSON object printed under the line that starts with `heading`. */
function jsonAfter(stdout: string, heading: string): unknown {
  const start = stdout.split('\n').findIndex((line) => line.startsWith(heading))
  if (start < 0) throw new Error(`no "${heading}" in the demo's output:\n${stdout}`)
  const lines = stdout.split('\n').slice(start + 1)
  const block = lines.slice(0, lines.findIndex((line) => line.trim() === '')).join('\n')
  return JSON.parse(block.slice(block.indexOf('{'), block.lastIndexOf('}') + 1))
}

describe('npm run demo', () => {
  it('is the script scripts/demo.ts', async () => {
    const { scripts } = JSON.parse(await readFile(new URL('package.json', `file://${REPO_ROOT}`), 'utf8')) as { scripts: Record<string, string> }
    expect(scripts['demo']).toBe('tsx scripts/demo.ts')
  })

  it(
    'runs the agent flow over MCP, pays build_swap from a throwaway wallet and prints a transaction to the router',
    async () => {
      const { code, stdout, stderr } = await runDemo()
      expect({ code, stderr: stderr.includes('demo failed') ? stderr : '' }).toEqual({ code: 0, stderr: '' })

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
