/** How the MCP tools run: who they call, the wallet that pays build_swap, its budget and the key for keyed calls. */
export type McpSettings = {
  /** The SwapEazi service the tools call; unset, the in-process app (no socket). */
  baseUrl?: string
  /** The wallet that pays build_swap's x402 fee; never logged. */
  walletPrivateKey?: `0x${string}`
  /** The most the payer spends per UTC day, atomic USDC. */
  dailyBudgetAtomic: bigint
  /** A SwapEazi key for the tools' keyed calls (pro corridor intelligence). */
  apiKey?: string
  /** Host names /mcp accepts in Host and Origin (DNS-rebinding protection). */
  allowedHosts: string[]
}

/** The host names a local MCP server answers when none are configured. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]']
