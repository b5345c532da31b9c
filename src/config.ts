import { isIP } from 'node:net'
import { fileURLToPath } from 'node:url'
import { type Address, isAddress } from 'viem'
import * as z from 'zod'
import { DEFAULT_RATE_LIMITS, type RateLimits } from './auth/rateLimits.ts'
import { DEFAULT_DATA_DIR, dataDirOf, setVariables } from './store/storeVariables.ts'
import { DEFAULT_SANCTIONS_FILE } from './compliance/loadSanctionsList.ts'
import { DEFAULT_ROUTER_ADDRESS, INERT_OWNER } from './contracts/deployRouter.ts'
import { ACROSS_API_URL } from './market/acrossFees.ts'
import { parseFixed } from './engine/index.ts'
import { AddressSchema, fixedHexSchema } from './schemas/address.ts'
import { ChainCode } from './schemas/catalogue.ts'
import { TEMPO_MAINNET_CHAIN_ID } from './payments/mpp/tempoConstants.ts'
import { DEFAULT_SERVER_PAYS_PER_IP_HOUR, LOOPBACK_HOSTS, type McpSettings } from './mcp/mcpSettings.ts'

const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * A whole number as a variable should write it: decimal digits only. `0x10`, `1e3`, `+80` and ` 80 ` are refused
 * rather than read as some number the operator may not have meant (Number() reads all four). `bounds` adds limits.
 */
function envInt(bounds: (n: z.ZodNumber) => z.ZodNumber = (n) => n) {
  return z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number in decimal digits (no sign, exponent, hex prefix or spaces)')
    .transform(Number)
    .pipe(bounds(z.number().int()))
}

const HexAddress = AddressSchema.refine(
  (value) => value === value.toLowerCase() || isAddress(value, { strict: true }),
  'has a mixed-case EIP-55 checksum that does not match',
)
/** secp256k1's group order: a private key is a number from 1 to n - 1. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const PrivateKey = fixedHexSchema(32, 'must be 0x followed by 64 hex characters').refine(
  (value) => !/^0x[0-9a-fA-F]{64}$/.test(value) || (BigInt(value) > 0n && BigInt(value) < SECP256K1_N),
  'is not a valid secp256k1 private key (it must be a number from 1 to n - 1)',
)

/**
 * A configuration error: one line, `invalid configuration: VARIABLE: problem` (several joined with `; `), which the
 * CLI prints after `swapeazi: ` and exits 1. No value of a variable is ever echoed (keys and URLs carry secrets).
 */
function configError(lines: readonly string[]): Error {
  return new Error(`invalid configuration: ${lines.join('; ')}`)
}

/** `NAME.path: message` for a zod issue inside a JSON variable, or `NAME: message` for the value as a whole. */
const issueLine = (name: string, issue: z.core.$ZodIssue): string => `${[name, ...issue.path.map(String)].join('.')}: ${issue.message}`

/** Every environment variable the service reads; each is documented in docs/configuration.md. */
/**
 * An HMAC secret: taken byte for byte (storeVariables.ts does not trim it), its length counted without the spaces and
 * line breaks around it, so a 31-character secret with a trailing line break is not taken for a 32-character one.
 */
const HmacSecret = z.string().refine((value) => value.trim().length >= 32, 'must be at least 32 characters')

const Env = z.object({
  SWAPEAZI_HOST: z.string().min(1).default('127.0.0.1'),
  SWAPEAZI_PORT: envInt((n) => n.min(0).max(65_535)).default(8402),
  SWAPEAZI_HEADERS_TIMEOUT_MS: envInt((n) => n.min(100).max(600_000)).default(10_000),
  SWAPEAZI_REQUEST_TIMEOUT_MS: envInt((n) => n.min(100).max(600_000)).default(30_000),
  SWAPEAZI_SHUTDOWN_GRACE_MS: envInt((n) => n.min(0).max(600_000)).default(10_000),
  SWAPEAZI_PUBLIC_URL: z.url().optional(),
  SWAPEAZI_APP_URL: z.url().default('https://app.swapeazi.com'),
  SWAPEAZI_MANIFEST_DIR: z.string().min(1).default(`${PACKAGE_ROOT}manifest`),
  SWAPEAZI_QUOTE_SECRET: HmacSecret.optional(),
  SWAPEAZI_ROUTER_ADDRESS: HexAddress.optional(),
  SWAPEAZI_ROUTER_ADDRESSES: z.string().optional(),
  SWAPEAZI_DEPLOYER_PRIVATE_KEY: PrivateKey.optional(),
  SWAPEAZI_DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .refine(
      (url) => URL.canParse(url),
      'is not a URL that parses: check the host and the port (a number from 1 to 65535), and percent-encode @, : and / in the user or password',
    )
    .optional(),
  SWAPEAZI_PAY_TO: HexAddress.optional(),
  SWAPEAZI_SETTLEMENT: z.enum(['ledger', 'onchain', 'facilitator']).default('ledger'),
  SWAPEAZI_BASE_RPC_URL: z.url().optional(),
  SWAPEAZI_SETTLER_PRIVATE_KEY: PrivateKey.optional(),
  SWAPEAZI_FACILITATOR_URL: z.url().optional(),
  SWAPEAZI_TEMPO_RPC_URL: z.url().optional(),
  SWAPEAZI_TEMPO_CHAIN_ID: envInt((n) => n.positive()).default(TEMPO_MAINNET_CHAIN_ID),
  SWAPEAZI_TEMPO_PAY_TO: HexAddress.optional(),
  SWAPEAZI_MPP_REALM: z
    .string()
    .regex(
      /^[\x21\x23-\x5b\x5d-\x7e]+$/,
      'must be printable ASCII without spaces, quotes or backslashes (a host name such as api.swapeazi.com)',
    )
    .optional(),
  SWAPEAZI_MPP_SECRET_KEY: HmacSecret.optional(),
  SWAPEAZI_RPC_URLS: z.string().optional(),
  SWAPEAZI_MARKET_REFRESH_MS: envInt((n) => n.min(500).max(600_000)).default(4000),
  SWAPEAZI_ACROSS_API_URL: z
    .string()
    .refine((value) => value === 'off' || isHttpUrl(value), {
      message: "must be off, or the http:// or https:// URL of Across's API (default https://app.across.to/api)",
    })
    .default(ACROSS_API_URL),
  SWAPEAZI_ACROSS_REQUESTS_PER_SEC: envInt((n) => n.min(1).max(50)).default(5),
  SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: envInt((n) => n.min(1).max(50)).default(10),
  // Refreshes begin this far apart (start to start). A lane goes at most the larger of this and one refresh, plus one
  // refresh, between reads: up to 240 s keeps every lane within Across's 5-minute maximum age at 3 or more requests a
  // second while Across answers; at 1 or 2, marketFromConfig refuses an interval too long for the catalogue's lanes.
  SWAPEAZI_ACROSS_REFRESH_MS: envInt((n) => n.min(10_000).max(240_000)).default(60_000),
  SWAPEAZI_TRACKER: z.enum(['on', 'off']).default('on'),
  SWAPEAZI_TRACKER_POLL_MS: envInt((n) => n.min(100).max(600_000)).default(4000),
  SWAPEAZI_CONFIRMATIONS: z.string().optional(),
  SWAPEAZI_RELAYER_PRIVATE_KEY: PrivateKey.optional(),
  SWAPEAZI_CCTP_ATTESTATION_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .default('https://iris-api.circle.com'),
  SWAPEAZI_SANCTIONS_FILE: z.string().min(1).optional(),
  SWAPEAZI_KEY_SECRET: HmacSecret.optional(),
  SWAPEAZI_TRUST_PROXY: z
    .string()
    .default('false')
    .refine((value) => parseTrustProxy(value) !== undefined, {
      message: 'must be true, false, the number of proxies you operate (0 to 10), or their IP addresses separated by commas',
    }),
  SWAPEAZI_RATE_LIMIT_ANONYMOUS: envInt((n) => n.min(1)).default(DEFAULT_RATE_LIMITS.anonymous),
  SWAPEAZI_RATE_LIMIT_FREE: envInt((n) => n.min(1)).default(DEFAULT_RATE_LIMITS.free),
  SWAPEAZI_RATE_LIMIT_PRO: envInt((n) => n.min(1)).default(DEFAULT_RATE_LIMITS.pro),
  SWAPEAZI_REFUSAL_HOLD_MS: envInt((n) => n.min(0).max(10_000)).default(DEFAULT_RATE_LIMITS.holdRefusalsMs),
  SWAPEAZI_BASE_URL: z.url().optional(),
  SWAPEAZI_WALLET_PRIVATE_KEY: PrivateKey.optional(),
  SWAPEAZI_DAILY_BUDGET_USDC: z
    .string()
    .regex(/^[0-9]+(\.[0-9]{1,6})?$/, 'must be a USDC amount such as "1.00" (at most 6 decimals)')
    .default('1.00'),
  SWAPEAZI_API_KEY: z
    .string()
    .regex(/^se_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'must be a SwapEazi key (se_...)')
    .optional(),
  SWAPEAZI_MCP_ALLOWED_HOSTS: z.string().optional(),
  SWAPEAZI_MCP_SERVER_PAYS: z.enum(['true', 'false']).default('false'),
  SWAPEAZI_MCP_SERVER_PAYS_PER_IP_HOUR: envInt((n) => n.min(1)).default(DEFAULT_SERVER_PAYS_PER_IP_HOUR),
  SWAPEAZI_MCP_SHARE_API_KEY: z.enum(['true', 'false']).default('false'),
  SWAPEAZI_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
})

/** The names of every variable the service reads. */
export const VARIABLES: readonly string[] = Object.keys(Env.shape)

export type Config = {
  host: string
  port: number
  /**
   * How long a request's headers, and the whole request with its body, may take to arrive (a slow client is cut with
   * 408), and how long in-flight requests get to finish on SIGTERM before their connections are closed.
   */
  server: { headersTimeoutMs: number; requestTimeoutMs: number; shutdownGraceMs: number }
  publicUrl: string
  /** SWAPEAZI_PUBLIC_URL is not set: `publicUrl` is SWAPEAZI_HOST and SWAPEAZI_PORT's (serve puts the port bound in for 0). */
  isPublicUrlDefault: boolean
  appUrl: string
  manifestDir: string
  /** Signs quote ids; unset, one is generated at first start and kept in the store (shared by replicas). */
  quoteSecret?: Uint8Array
  logLevel: z.infer<typeof Env>['SWAPEAZI_LOG_LEVEL']
  /**
   * The live market (DESIGN 5, docs/live-market.md): a JSON-RPC URL per chain read live; the other chains, and every
   * chain when none is set, price from the embedded snapshot. Each chain refreshes every max(refreshMs, block time).
   */
  market: {
    rpcUrls: Partial<Record<ChainCode, string>>
    refreshMs: number
    /**
     * Across's API, read for each Across lane's suggested fees while the live market is on; undefined when
     * SWAPEAZI_ACROSS_API_URL=off, and Across lanes keep the snapshot's fees.
     */
    acrossApiUrl?: string
    /**
     * Across's API is asked at most this often a second (evenly spaced), and at most `acrossWarmingRequestsPerSecond`
     * (not less) for the first read after start of the lanes with no usable figures; a refresh of every lane begins
     * `acrossRefreshMs` after the last began (at once when the last took longer).
     */
    acrossRequestsPerSecond: number
    acrossWarmingRequestsPerSecond: number
    acrossRefreshMs: number
  }
  /**
   * The swap tracker (issue 18, docs/configuration.md): on by default in `serve` for the chains of `market.rpcUrls`;
   * its poll interval, and per-chain confirmation depths over the tracker's defaults.
   */
  tracker: { enabled: boolean; pollMs: number; confirmations: Partial<Record<ChainCode, number>> }
  /**
   * Our CCTP relayer (issue 18, docs/relaying.md): on in `serve` when a relayer key is set, for the chains of
   * `market.rpcUrls`; it polls the attestation service (Circle's Iris by default) and pays destination gas. Never logged.
   */
  relayer: { privateKey?: `0x${string}`; attestationUrl: string }
  /** The router on every chain, and per-chain exceptions (the CREATE2 address is the same everywhere by design). */
  router: { address: Address; byChain: Partial<Record<ChainCode, Address>>; isDefault: boolean }
  /** Signs `swapeazi router deploy` and `router allow`; never logged. */
  deployerPrivateKey?: `0x${string}`
  /**
   * PostgreSQL when a URL is set, else PGlite under `dataDir` (DESIGN 9). A PGlite `template` is never read from the
   * environment: tests give one to runCli so that a new embedded database starts from a migrated copy (openPgliteSql).
   */
  store: { driver: 'postgres'; url: string } | { driver: 'pglite'; dataDir: string; template?: Blob }
  /** The OFAC SDN list file screened against (DESIGN 7.18). */
  sanctionsFile: string
  /** Signs API keys; unset, one is generated at first start and kept in the store (shared by replicas). */
  keySecret?: Uint8Array
  /** Take the client IP from X-Forwarded-For (behind a proxy we run), not from the socket. */
  /** How many proxies we operate in front of the service, or their addresses (DESIGN 7.28). */
  trustProxy: number | readonly string[]
  /** Requests per minute on /api/v1/* (DESIGN 7.16). */
  rateLimits: RateLimits
  /** The MCP server (DESIGN 8). */
  mcp: McpConfig
  payments: {
    /** Our Base wallet that x402 payments pay; `isDefault` when unset (the inert 0x…dEaD, ledger mode only). */
    payTo: Address
    isPayToDefault: boolean
    settlement:
      | { mode: 'ledger' }
      | { mode: 'onchain'; rpcUrl: string; settlerPrivateKey: `0x${string}` }
      | { mode: 'facilitator'; url: string }
    /** The MPP rail on /api/mpp/swap (DESIGN 7.25); absent when SWAPEAZI_TEMPO_RPC_URL is unset, and then not offered. */
    mpp?: MppConfig
  }
}

/** The MPP rail's settings (docs/mpp.md). */
export type MppConfig = {
  /** The Tempo JSON-RPC every credential is verified against. */
  rpcUrl: string
  chainId: number
  /** Our Tempo address that MPP charges pay. */
  recipient: Address
  /** The challenges' realm, pinned: the payer's attribution memo binds to it. */
  realm: string
  /** HMAC key of the challenge ids; unset, one is generated at first start and kept in the store (shared by replicas). */
  secretKey?: string
}

type Env = z.infer<typeof Env>

/** An absolute http:// or https:// URL. */
function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

/** SWAPEAZI_TRUST_PROXY: `true` is one proxy, `false` none, a number that many, or the proxies' IP addresses. */
export function parseTrustProxy(text: string): number | readonly string[] | undefined {
  const value = text.trim()
  if (value === '' || value === 'false') return 0
  if (value === 'true') return 1
  if (/^\d{1,2}$/.test(value)) return Number(value) <= 10 ? Number(value) : undefined
  const addresses = value.split(',').map((entry) => entry.trim())
  return addresses.every((entry) => isIP(entry) !== 0) ? addresses : undefined
}

/** The MCP tools' settings (src/mcp/mcpSettings.ts). */
export type McpConfig = McpSettings

/** The hosts /mcp accepts when nothing else is known: loopback only. */
export { LOOPBACK_HOSTS }

/** /mcp's allow-list: the configured names, else loopback and the public URL's host. */
function allowedHosts(e: Env): string[] {
  if (e.SWAPEAZI_MCP_ALLOWED_HOSTS !== undefined && e.SWAPEAZI_MCP_ALLOWED_HOSTS.trim() !== '')
    return e.SWAPEAZI_MCP_ALLOWED_HOSTS.split(',')
      .map((host) => host.trim().toLowerCase())
      .filter((host) => host.length > 0)
  const hosts = new Set(LOOPBACK_HOSTS)
  if (e.SWAPEAZI_PUBLIC_URL !== undefined) hosts.add(new URL(e.SWAPEAZI_PUBLIC_URL).hostname.toLowerCase())
  if (e.SWAPEAZI_HOST !== '0.0.0.0' && e.SWAPEAZI_HOST !== '::') hosts.add(e.SWAPEAZI_HOST.toLowerCase())
  return [...hosts]
}

/** DESIGN 7.10: each settlement mode and the variables it cannot run without. */
function settlementConfig(e: Env): Config['payments']['settlement'] {
  const missing = (names: string[]): never => {
    throw configError(names.map((name) => `${name}: is required when SWAPEAZI_SETTLEMENT=${e.SWAPEAZI_SETTLEMENT}`))
  }
  switch (e.SWAPEAZI_SETTLEMENT) {
    case 'ledger':
      return { mode: 'ledger' }
    case 'onchain': {
      const absent = [
        ...(e.SWAPEAZI_BASE_RPC_URL === undefined ? ['SWAPEAZI_BASE_RPC_URL'] : []),
        ...(e.SWAPEAZI_SETTLER_PRIVATE_KEY === undefined ? ['SWAPEAZI_SETTLER_PRIVATE_KEY'] : []),
        ...(e.SWAPEAZI_PAY_TO === undefined ? ['SWAPEAZI_PAY_TO'] : []),
      ]
      if (absent.length > 0 || e.SWAPEAZI_BASE_RPC_URL === undefined || e.SWAPEAZI_SETTLER_PRIVATE_KEY === undefined) return missing(absent)
      return { mode: 'onchain', rpcUrl: e.SWAPEAZI_BASE_RPC_URL, settlerPrivateKey: e.SWAPEAZI_SETTLER_PRIVATE_KEY }
    }
    case 'facilitator': {
      const absent = [
        ...(e.SWAPEAZI_FACILITATOR_URL === undefined ? ['SWAPEAZI_FACILITATOR_URL'] : []),
        ...(e.SWAPEAZI_PAY_TO === undefined ? ['SWAPEAZI_PAY_TO'] : []),
      ]
      if (absent.length > 0 || e.SWAPEAZI_FACILITATOR_URL === undefined) return missing(absent)
      return { mode: 'facilitator', url: e.SWAPEAZI_FACILITATOR_URL.replace(/\/$/, '') }
    }
  }
}

/** The MPP rail: on only with a Tempo RPC, and then only with our own Tempo address to be paid. */
function mppConfig(e: Env, publicUrl: string): MppConfig | undefined {
  if (e.SWAPEAZI_TEMPO_RPC_URL === undefined) return undefined
  if (e.SWAPEAZI_TEMPO_PAY_TO === undefined)
    throw configError([
      'SWAPEAZI_TEMPO_PAY_TO: is required when SWAPEAZI_TEMPO_RPC_URL is set (the Tempo address MPP charges pay; it is not taken from SWAPEAZI_PAY_TO, which may be a Base contract wallet that no one controls on Tempo)',
    ])
  return {
    rpcUrl: e.SWAPEAZI_TEMPO_RPC_URL,
    chainId: e.SWAPEAZI_TEMPO_CHAIN_ID,
    recipient: e.SWAPEAZI_TEMPO_PAY_TO,
    realm: e.SWAPEAZI_MPP_REALM ?? new URL(publicUrl).hostname,
    ...(e.SWAPEAZI_MPP_SECRET_KEY === undefined ? {} : { secretKey: e.SWAPEAZI_MPP_SECRET_KEY }),
  }
}

const RouterAddresses = z.partialRecord(ChainCode, HexAddress)

function parseRouterAddresses(text: string | undefined): Partial<Record<ChainCode, Address>> {
  if (text === undefined || text.trim() === '') return {}
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw configError(['SWAPEAZI_ROUTER_ADDRESSES: must be a JSON object such as {"BAS":"0x..."}'])
  }
  if (!isJsonObject(json)) throw configError(['SWAPEAZI_ROUTER_ADDRESSES: must be a JSON object such as {"BAS":"0x..."}'])
  const parsed = RouterAddresses.safeParse(json)
  if (!parsed.success) throw configError(parsed.error.issues.map((issue) => issueLine('SWAPEAZI_ROUTER_ADDRESSES', issue)))
  return parsed.data
}

const EvmChainCode = z.enum(['ETH', 'POL', 'ARB', 'OPT', 'BAS', 'BNB', 'GNO', 'CEL'], {
  error: 'must be an EVM chain code: ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL',
})
const RpcUrls = z.partialRecord(EvmChainCode, z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }))

const RPC_URLS_SHAPE = 'SWAPEAZI_RPC_URLS: must be a JSON object such as {"BAS":"https://...","POL":"https://..."}'

/** True for a JSON object (not null, not an array): what every JSON variable holds. */
const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** SWAPEAZI_RPC_URLS: a JSON object of chain code to JSON-RPC URL, such as {"BAS":"https://…","POL":"https://…"}. */
function parseRpcUrls(text: string | undefined): Partial<Record<ChainCode, string>> {
  if (text === undefined) return {}
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw configError([RPC_URLS_SHAPE])
  }
  if (!isJsonObject(json)) throw configError([RPC_URLS_SHAPE])
  const parsed = RpcUrls.safeParse(json)
  if (!parsed.success)
    throw configError(
      parsed.error.issues.map((issue) =>
        issue.code === 'unrecognized_keys'
          ? `SWAPEAZI_RPC_URLS: ${issue.keys.join(', ')}: not a chain read live; use ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL`
          : issueLine('SWAPEAZI_RPC_URLS', issue),
      ),
    )
  return parsed.data
}

/** SWAPEAZI_CONFIRMATIONS: a JSON object of chain code to a block count, such as {"BAS":10,"POL":128}. */
function parseConfirmations(text: string | undefined): Partial<Record<ChainCode, number>> {
  if (text === undefined) return {}
  const shape = 'SWAPEAZI_CONFIRMATIONS: must be a JSON object of chain code to block count such as {"BAS":10,"POL":128}'
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw configError([shape])
  }
  if (!isJsonObject(json)) throw configError([shape])
  const parsed = z.partialRecord(EvmChainCode, z.number().int().min(0).max(10_000)).safeParse(json)
  if (!parsed.success)
    throw configError(
      parsed.error.issues.map((issue) =>
        issue.code === 'unrecognized_keys'
          ? `SWAPEAZI_CONFIRMATIONS: ${issue.keys.join(', ')}: not a chain read live; use ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL`
          : issueLine('SWAPEAZI_CONFIRMATIONS', issue),
      ),
    )
  return parsed.data
}

/** Reads and validates the environment: the only place that touches process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(setVariables(env))
  if (!parsed.success) throw configError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`))
  const e = parsed.data
  if (e.SWAPEAZI_HEADERS_TIMEOUT_MS > e.SWAPEAZI_REQUEST_TIMEOUT_MS)
    throw configError([
      'SWAPEAZI_HEADERS_TIMEOUT_MS: must not be more than SWAPEAZI_REQUEST_TIMEOUT_MS (the whole request includes its headers)',
    ])
  if (e.SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC < e.SWAPEAZI_ACROSS_REQUESTS_PER_SEC)
    throw configError([
      'SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: must not be less than SWAPEAZI_ACROSS_REQUESTS_PER_SEC (the first read after start is never slower than the others)',
    ])
  const publicUrl = (e.SWAPEAZI_PUBLIC_URL ?? `http://${e.SWAPEAZI_HOST}:${e.SWAPEAZI_PORT}`).replace(/\/$/, '')
  const mpp = mppConfig(e, publicUrl)
  return {
    host: e.SWAPEAZI_HOST,
    port: e.SWAPEAZI_PORT,
    server: {
      headersTimeoutMs: e.SWAPEAZI_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.SWAPEAZI_REQUEST_TIMEOUT_MS,
      shutdownGraceMs: e.SWAPEAZI_SHUTDOWN_GRACE_MS,
    },
    publicUrl,
    isPublicUrlDefault: e.SWAPEAZI_PUBLIC_URL === undefined,
    appUrl: e.SWAPEAZI_APP_URL,
    manifestDir: e.SWAPEAZI_MANIFEST_DIR,
    ...(e.SWAPEAZI_QUOTE_SECRET === undefined ? {} : { quoteSecret: new TextEncoder().encode(e.SWAPEAZI_QUOTE_SECRET) }),
    logLevel: e.SWAPEAZI_LOG_LEVEL,
    ...(e.SWAPEAZI_DEPLOYER_PRIVATE_KEY === undefined ? {} : { deployerPrivateKey: e.SWAPEAZI_DEPLOYER_PRIVATE_KEY }),
    store:
      e.DATABASE_URL === undefined
        ? { driver: 'pglite', dataDir: dataDirOf(e.SWAPEAZI_DATA_DIR) }
        : { driver: 'postgres', url: e.DATABASE_URL },
    ...(e.SWAPEAZI_KEY_SECRET === undefined ? {} : { keySecret: new TextEncoder().encode(e.SWAPEAZI_KEY_SECRET) }),
    trustProxy: parseTrustProxy(e.SWAPEAZI_TRUST_PROXY) ?? 0,
    mcp: {
      ...(e.SWAPEAZI_BASE_URL === undefined ? {} : { baseUrl: e.SWAPEAZI_BASE_URL.replace(/\/$/, '') }),
      ...(e.SWAPEAZI_WALLET_PRIVATE_KEY === undefined ? {} : { walletPrivateKey: e.SWAPEAZI_WALLET_PRIVATE_KEY }),
      dailyBudgetAtomic: parseFixed(e.SWAPEAZI_DAILY_BUDGET_USDC, 6),
      ...(e.SWAPEAZI_API_KEY === undefined ? {} : { apiKey: e.SWAPEAZI_API_KEY }),
      allowedHosts: allowedHosts(e),
      serverPaysOnHttp: e.SWAPEAZI_MCP_SERVER_PAYS === 'true',
      serverPaysPerIpHour: e.SWAPEAZI_MCP_SERVER_PAYS_PER_IP_HOUR,
      shareApiKeyOnHttp: e.SWAPEAZI_MCP_SHARE_API_KEY === 'true',
    },
    rateLimits: {
      anonymous: e.SWAPEAZI_RATE_LIMIT_ANONYMOUS,
      free: e.SWAPEAZI_RATE_LIMIT_FREE,
      pro: e.SWAPEAZI_RATE_LIMIT_PRO,
      holdRefusalsMs: e.SWAPEAZI_REFUSAL_HOLD_MS,
    },
    sanctionsFile: e.SWAPEAZI_SANCTIONS_FILE ?? `${e.SWAPEAZI_MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`,
    payments: {
      payTo: e.SWAPEAZI_PAY_TO ?? INERT_OWNER,
      isPayToDefault: e.SWAPEAZI_PAY_TO === undefined,
      settlement: settlementConfig(e),
      ...(mpp === undefined ? {} : { mpp }),
    },
    market: {
      rpcUrls: parseRpcUrls(e.SWAPEAZI_RPC_URLS),
      refreshMs: e.SWAPEAZI_MARKET_REFRESH_MS,
      ...(e.SWAPEAZI_ACROSS_API_URL === 'off' ? {} : { acrossApiUrl: e.SWAPEAZI_ACROSS_API_URL.replace(/\/+$/, '') }),
      acrossRequestsPerSecond: e.SWAPEAZI_ACROSS_REQUESTS_PER_SEC,
      acrossWarmingRequestsPerSecond: e.SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC,
      acrossRefreshMs: e.SWAPEAZI_ACROSS_REFRESH_MS,
    },
    tracker: {
      enabled: e.SWAPEAZI_TRACKER === 'on',
      pollMs: e.SWAPEAZI_TRACKER_POLL_MS,
      confirmations: parseConfirmations(e.SWAPEAZI_CONFIRMATIONS),
    },
    relayer: {
      ...(e.SWAPEAZI_RELAYER_PRIVATE_KEY === undefined ? {} : { privateKey: e.SWAPEAZI_RELAYER_PRIVATE_KEY }),
      attestationUrl: e.SWAPEAZI_CCTP_ATTESTATION_URL.replace(/\/+$/, ''),
    },
    router: {
      address: e.SWAPEAZI_ROUTER_ADDRESS ?? DEFAULT_ROUTER_ADDRESS,
      byChain: parseRouterAddresses(e.SWAPEAZI_ROUTER_ADDRESSES),
      isDefault: e.SWAPEAZI_ROUTER_ADDRESS === undefined && e.SWAPEAZI_ROUTER_ADDRESSES === undefined,
    },
  }
}
