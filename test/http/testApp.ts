import { pino } from 'pino'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { createServer, type ServerDeps } from '../../src/app/createServer.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { sanctionsListScreener } from '../../src/compliance/sanctionsListScreener.ts'
import { ledgerSettler } from '../../src/payments/x402/ledgerSettler.ts'
import { createStore, type Store } from '../../src/store/createStore.ts'
import { migrate } from '../../src/store/migrations.ts'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import type { Sql } from '../../src/store/sql.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

/** The repository's catalogue directory. */
export const MANIFEST_DIR = new URL('../../manifest', import.meta.url).pathname

/** The fixed clock every HTTP test runs under: 12 hours after the snapshot's asOf. */
export const NOW_MS = Date.parse('2026-11-20T12:00:00Z')
export const QUOTE_SECRET = new TextEncoder().encode('test-secret-test-secret-test-secret!')
export const APP_URL = 'https://app.example.test'
export const VERSION = '0.0.0-test'
export const PUBLIC_URL = 'http://127.0.0.1:8402'

/** A lowercase (hence checksum-free) sender address. */
export const FROM_ADDRESS = '0x1111111111111111111111111111111111111111'
/** The router every test chain uses unless a test deploys its own. */
export const ROUTER_ADDRESS = '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'

/** Signs API keys in tests. */
export const KEY_SECRET = new TextEncoder().encode('test-key-secret-test-key-secret!!')

/** Our Base wallet in tests: what x402 payments must pay. */
export const PAY_TO = '0x2222222222222222222222222222222222222222'

const loaded = loadCatalogue(MANIFEST_DIR)
const sanctions = loadSanctionsList(`${MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`)

/**
 * A migrated in-memory PGlite that opens on first use, so tests that never touch the store never pay for it: a clone
 * of the run's migrated template (migrate then finds nothing to do).
 */
export function lazyMemoryStore(): Store {
  let opening: Promise<Sql> | undefined
  const open = (): Promise<Sql> =>
    (opening ??= migratedPgliteTemplate().then(async (template) => {
      const sql = await openPgliteSql(undefined, { template })
      await migrate(sql)
      return sql
    }))
  const sql: Sql = {
    describe: 'pglite (in memory)',
    isExclusive: true,
    query: async (text, params) => (await open()).query(text, params),
    transaction: async (work) => (await open()).transaction(work),
    close: async () => {
      if (opening) await (await opening).close()
    },
  }
  return createStore(sql)
}

let sharedStore: Store | undefined

/** Dependencies for the in-process app: the real catalogue, a silent logger and a fixed clock. */
export function testDeps(overrides: Partial<ServerDeps> = {}): ServerDeps {
  return {
    catalogue: loaded.catalogue,
    files: loaded.files,
    clock: () => NOW_MS,
    log: pino({ level: 'silent' }),
    quoteSecret: QUOTE_SECRET,
    appUrl: APP_URL,
    version: VERSION,
    publicUrl: PUBLIC_URL,
    routerOn: () => routerDeployment(ROUTER_ADDRESS),
    store: (sharedStore ??= lazyMemoryStore()),
    screener: sanctionsListScreener(sanctions),
    settler: ledgerSettler(),
    payTo: PAY_TO,
    keySecret: KEY_SECRET,
    // Every in-process request comes from one IP and the clock stands still: tests that count set their own limits.
    rateLimits: { anonymous: 1_000_000, free: 1_000_000, pro: 1_000_000, holdRefusalsMs: 0 },
    ...overrides,
  }
}

export type TestApp = ReturnType<typeof createServer>

export function testApp(overrides: Partial<ServerDeps> = {}): TestApp {
  return createServer(testDeps(overrides))
}

/** POSTs `body` as JSON (serialised with JSON.stringify) to the app, no socket. */
export function postJson(app: TestApp, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(
    app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
  )
}

/** POSTs a raw body text with the given content type (default application/json). */
export function postRaw(app: TestApp, path: string, body: string, contentType = 'application/json'): Promise<Response> {
  return Promise.resolve(app.request(path, { method: 'POST', headers: { 'content-type': contentType }, body }))
}

export function get(app: TestApp, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(app.request(path, { method: 'GET', headers }))
}

/** A valid QuoteParams body with overrides; `undefined` in overrides removes the field. */
export function quoteBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    fromChain: 'ETH',
    toChain: 'ETH',
    fromToken: 'USDC',
    toToken: 'USDT',
    fromAmount: '1000',
    fromAddress: FROM_ADDRESS,
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete body[key]
    else body[key] = value
  }
  return body
}

/** Reads a response body as JSON; throws when it does not parse. The cast is the caller's claim, checked by its asserts. */
export async function readJson<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T
}
/** The helper's first name, kept for callers written against it. */
export const json = readJson

/**
 * A non-negative or negative decimal string as a bigint in `places` fraction digits, exactly (no float). Throws on
 * anything that is not a plain decimal or has more fraction digits than `places`.
 */
export function decimalToUnits(text: string, places: number): bigint {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?$/.exec(text)
  if (!match) throw new RangeError(`"${text}" is not a decimal string`)
  const [, sign = '', whole = '0', fraction = ''] = match
  if (fraction.length > places) throw new RangeError(`"${text}" has more than ${places} fraction digits`)
  const value = BigInt(whole + fraction.padEnd(places, '0'))
  return sign === '-' ? -value : value
}

/** USD decimal string (at most 6 places) as micro-dollars. */
export const microUsd = (text: string): bigint => decimalToUnits(text, 6)

/** A plain decimal string (no sign, exponent or spaces). */
export const DECIMAL_STRING = /^[0-9]+(\.[0-9]+)?$/
