import { IssuedApiKey } from '../schemas/keys.ts'
import { issueSelfServeKey } from '../service/issueApiKey.ts'
import { ServiceError } from '../service/serviceError.ts'
import { clientIp } from './clientIp.ts'
import { defineEndpoint } from './endpoint.ts'
import { allowedHostnamesOf, isForeignOrigin } from './isForeignOrigin.ts'
import { jsonResponse, problemResponseDoc } from './openapiDoc.ts'
import { requestHeader } from './requestHeader.ts'

/**
 * POST /api/v1/keys: self-serve free keys (DESIGN 7.14), the endpoint behind the portal's form. No body needed. A page
 * of another site may not have its visitors' browsers mint keys from their addresses: a foreign Origin is 403.
 */
export const issueKey = defineEndpoint({
  method: 'POST',
  path: '/api/v1/keys',
  doc: {
    summary: 'Self-serve free API key: at most 3 per IP per rolling 24 hours; the key is shown once',
    operationId: 'issueKey',
    responses: {
      201: jsonResponse(IssuedApiKey, 'The new key'),
      403: problemResponseDoc(
        "origin_not_allowed: sent by a page of another site (its Origin is neither the service's public URL nor the host the request was sent to); programs send no Origin",
      ),
      429: problemResponseDoc(
        'rate_limited: 3 keys from this IP in 24 hours; `Retry-After` and `retryAfterSec` say when the next is allowed, and `RateLimit` and `RateLimit-Policy` name the `key-issuance` policy',
      ),
    },
  },
  handler: (deps) => {
    const publicOrigin = new URL(deps.publicUrl).origin
    const allowedHostnames = allowedHostnamesOf(deps.allowedHosts ?? [], deps.publicUrl)
    return async (c) => {
      const origin = requestHeader(c, 'origin')
      if (isForeignOrigin(origin, { publicOrigin, requestHost: new URL(c.req.url).host, allowedHostnames }))
        throw new ServiceError(
          'origin_not_allowed',
          `Keys are issued to this service's own portal and to programs, not to pages of other sites (this request came from ${String(origin).slice(0, 100)}). Get a key at ${deps.publicUrl}/, or POST /api/v1/keys from your own program or curl, which send no Origin.`,
          { origin: String(origin).slice(0, 200), portal: `${deps.publicUrl}/` },
        )
      refuseBody(await c.req.text())
      const issued = await issueSelfServeKey(deps, clientIp(c, deps.trustProxy ?? 0))
      return c.json(issued, 201, { 'cache-control': 'no-store' })
    }
  },
})

/**
 * The route takes no body (the portal's form sends none): an empty one, or `{}` as some clients always send, is
 * accepted; anything else is refused, not ignored, so `{"tier": "pro"}` is not answered with a free key as if granted.
 */
function refuseBody(text: string): void {
  const trimmed = text.trim()
  if (trimmed === '' || /^\{\s*\}$/.test(trimmed)) return
  const message =
    'this endpoint takes no body: every self-serve key is a free key; pro keys are issued by the operator (swapeazi keys issue --tier pro)'
  throw new ServiceError('invalid_request', `The request ${message}.`, { errors: [{ field: '(body)', message }] })
}
