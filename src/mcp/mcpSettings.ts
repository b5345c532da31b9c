/** How the MCP tools run: who they call, the wallet that pays build_swap, its budget and the key for keyed calls. */
export type McpSettings = {
  /** The SwapEazi service the tools call; unset, the in-process app (no socket). */
  baseUrl?: string
  /** The wallet that pays build_swap's x402 fee; never logged. */
  walletPrivateKey?: `0x${string}`
  /** The most the payer spends per UTC day, atomic USDC. */
  dailyBudgetAtomic: bigint
  /** A SwapEazi key the tools send on every /api/v1/* call: its rate limit, and its tier for corridor intelligence. */
  apiKey?: string
  /** /mcp's build_swap is paid by the server's wallet (the operator opted in); unset, remote agents pay their own. */
  serverPaysOnHttp?: boolean
  /** With `serverPaysOnHttp`, the most builds the server's wallet pays per caller IP per hour. */
  serverPaysPerIpHour?: number
  /** /mcp's anonymous callers use `apiKey` (the operator opted in); unset, they get the free tier. */
  shareApiKeyOnHttp?: boolean
  /** Host names /mcp accepts in Host and Origin (DNS-rebinding protection). */
  allowedHosts: string[]
}

/** The host names a local MCP server answers when none are configured. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]']

/** The builds the server's wallet pays per caller IP per hour on /mcp, when the operator lets it pay there. */
export const DEFAULT_SERVER_PAYS_PER_IP_HOUR = 5
