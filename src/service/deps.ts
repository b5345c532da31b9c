import type { Logger } from 'pino'
import type { Address } from 'viem'
import type { RateLimits } from '../auth/rateLimits.ts'
import type { Screener } from '../compliance/screener.ts'
import type { TempoCharge } from '../payments/mpp/createTempoCharge.ts'
import type { Settler } from '../payments/x402/settlement.ts'
import type { LiveMarket } from '../market/liveMarket.ts'
import type { Simulators } from '../tx/simulateTransaction.ts'
import type { Store } from '../store/createStore.ts'
import type { CatalogueFiles } from '../engine/index.ts'
import type { Catalogue } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { RouterDeployment } from '../tx/routerDeployment.ts'
import type { SwapTracking } from './swapTracking.ts'

/** What the use cases need; built once in the CLI, or with literals in tests. */
export type ServiceDeps = {
  catalogue: Catalogue
  /** The raw catalogue files, for the figures' sources and texts the manifest publishes. */
  files: CatalogueFiles
  /** Milliseconds since the epoch. */
  clock: () => number
  log: Logger
  /** HMAC key for quote tokens (DESIGN 7.12). */
  quoteSecret: Uint8Array
  /** The end-user application for user-signed flows ({app_url} in the spec). */
  appUrl: string
  version: string
  /** Our router and its executor on a chain. */
  routerOn: (chain: ChainCode) => RouterDeployment
  /** Payments and swaps (DESIGN 9). */
  store: Store
  /** Compliance screening of every swap's addresses (DESIGN 7.18). */
  screener: Screener
  /** How accepted x402 payments become money (DESIGN 7.10). */
  settler: Settler
  /** The MPP rail of /api/mpp/swap (DESIGN 7.25); absent when no Tempo RPC is configured, and then not offered. */
  mpp?: TempoCharge
  /** Our wallet on Base that x402 payments pay. */
  payTo: Address
  /** HMAC key that signs and verifies API keys (DESIGN 7.14): configured, or generated once and kept in the store. */
  keySecret: Uint8Array
  /**
   * The live market (DESIGN 5) when SWAPEAZI_RPC_URLS names chains: `catalogue` is then its current catalogue,
   * replaced after each refresh. Absent, the embedded snapshot prices everything.
   */
  market?: LiveMarket
  /** Pre-flight simulation per chain with an RPC (preflightBuild.ts, simulateTransaction.ts); absent chains build without it. */
  simulators?: Simulators
  /** Requests per minute on /api/v1/* for anonymous callers (per IP), free keys and pro keys (DESIGN 7.16). */
  rateLimits: RateLimits
  /** The swap lifecycle the status reads (swapTracking.ts); absent, every swap reads as built and untracked. */
  tracking?: SwapTracking
}
