import type { Context } from 'hono'
import type { ApiKeyClaims } from '../auth/apiKey.ts'
import { missingKeyError } from '../service/authenticateApiKey.ts'
import type { ServiceDeps } from '../service/deps.ts'
import type { TrustProxy } from './clientIp.ts'

export type AppDeps = ServiceDeps & {
  /** Absolute base URL the service is reached at (OpenAPI `servers`, x402 `resource`). */
  publicUrl: string
  /** The proxies we operate in front of the service, whose X-Forwarded-For entries are believed (DESIGN 7.28). */
  trustProxy?: TrustProxy
  /**
   * The host names a browser may reach the service by, besides IP addresses, the public URL's and `localhost`
   * (SWAPEAZI_MCP_ALLOWED_HOSTS, as /mcp takes them): the portal's key form refuses a page on any other name, against
   * DNS rebinding.
   */
  allowedHosts?: readonly string[]
}

/** What the middleware puts on every request's context. */
export type AppEnv = { Variables: { requestId: string; apiKey?: ApiKeyClaims; apiKeySource?: ApiKeySource } }

/** Which header carried the verified key. */
export type ApiKeySource = 'x-swapeazi-key' | 'bearer'

/**
 * The request's verified API key (the rate-limit middleware checked it), or 401 `invalid_key` when none was sent:
 * for routes that need a key (spec endpoints 10 and 11).
 */
export function requireApiKey(c: Context<AppEnv>): ApiKeyClaims {
  const claims = c.get('apiKey')
  if (claims === undefined) throw missingKeyError()
  return claims
}
