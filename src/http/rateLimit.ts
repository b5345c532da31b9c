import type { MiddlewareHandler } from 'hono'
import { rateLimitHeaders } from '../auth/rateLimits.ts'
import { type AdmitApiRequest, rateLimitedError } from '../service/admitApiRequest.ts'
import { createLocalLimits, type LocalLimits } from '../service/localLimits.ts'
import type { ApiKeySource, AppDeps, AppEnv } from './appEnv.ts'
import { clientIp, type TrustProxy } from './clientIp.ts'
import type { AppScope } from './endpoint.ts'
import { requestHeader } from './requestHeader.ts'
import { setResponseHeader } from './setResponseHeader.ts'

const LOCAL_LIMITS = Symbol('localLimits')

/** The app's one LocalLimits: the rate-limit middleware and the paid endpoints count refusals in the same minute. */
export const localLimitsOf = (deps: AppDeps, scope: AppScope): LocalLimits => scope.once(LOCAL_LIMITS, () => createLocalLimits(deps))

/** Most refusals held at once, process-wide: each holds a socket and a timer, so past this they are answered at once. */
export const MAX_HELD_REFUSALS = 1_000
let heldRefusals = 0

/**
 * Waits `ms` before a refusal is answered (0: at once), unless MAX_HELD_REFUSALS are already waiting: a client that
 * ignores Retry-After with many connections would otherwise turn its rate into that many open sockets.
 */
export const holdRefusal = (ms: number): Promise<void> | undefined => {
  if (ms <= 0 || heldRefusals >= MAX_HELD_REFUSALS) return undefined
  heldRefusals += 1
  return new Promise((resolve) =>
    setTimeout(() => {
      heldRefusals -= 1
      resolve()
    }, ms),
  )
}

/** The API key a request carries and where: `x-swapeazi-key`, else an `Authorization: Bearer` token (DESIGN 7.14). */
function requestApiKey(
  header: (name: string) => string | undefined,
): { key: string; source: ApiKeySource; isConflicting: boolean } | undefined {
  const key = header('x-swapeazi-key')
  // `Bearer` with no token is a key sent empty (401 `missing`), not no key; another scheme is not ours to read.
  const bearer = /^bearer(?:\s+(.*))?$/i.exec((header('authorization') ?? '').trim())
  const bearerKey = bearer === null ? undefined : (bearer[1] ?? '').trim()
  // Both headers, with different keys: which one the caller meant is not ours to guess (the forged one is not skipped).
  if (key !== undefined) return { key, source: 'x-swapeazi-key', isConflicting: bearerKey !== undefined && bearerKey !== key.trim() }
  return bearerKey === undefined ? undefined : { key: bearerKey, source: 'bearer', isConflicting: false }
}

/**
 * /api/v1/*: checks the key a request carries, counts the request against its limit (DESIGN 7.16), and answers the
 * IETF RateLimit headers on every response, the 429 included (held first when the source keeps sending past twice
 * its limit). The verified key is left on the context.
 */
export function rateLimit(admit: AdmitApiRequest, trustProxy: TrustProxy): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const sent = requestApiKey((name) => requestHeader(c, name))
    const admitted = await admit({ ip: clientIp(c, trustProxy), key: sent?.key, isConflicting: sent?.isConflicting === true })
    // Onto Node's response, as the request id is: c.header() would build a web Headers object on every request.
    for (const [name, value] of Object.entries(rateLimitHeaders(admitted.decision))) setResponseHeader(c, name, value)
    if (!admitted.decision.isAllowed) {
      await holdRefusal(admitted.holdMs)
      throw rateLimitedError(admitted.decision)
    }
    if (admitted.claims !== undefined && sent !== undefined) {
      c.set('apiKey', admitted.claims)
      c.set('apiKeySource', sent.source)
    }
    await next()
  }
}
