import { IssuedApiKey } from '../schemas/keys.ts'
import { issueSelfServeKey } from '../service/issueApiKey.ts'
import { clientIp } from './clientIp.ts'
import { defineEndpoint } from './endpoint.ts'
import { jsonResponse, problemResponseDoc } from './openapiDoc.ts'

/** POST /api/v1/keys: self-serve free keys (DESIGN 7.14), the endpoint behind the portal's form. No body needed. */
export const issueKey = defineEndpoint({
  method: 'POST',
  path: '/api/v1/keys',
  doc: {
    summary: 'Self-serve free API key: at most 3 per IP per rolling 24 hours; the key is shown once',
    operationId: 'issueKey',
    responses: {
      201: jsonResponse(IssuedApiKey, 'The new key'),
      429: problemResponseDoc(
        'rate_limited: 3 keys from this IP in 24 hours; `Retry-After` and `retryAfterSec` say when the next is allowed',
      ),
    },
  },
  handler: (deps) => async (c) => {
    const issued = await issueSelfServeKey(deps, clientIp(c, deps.trustProxy ?? 0))
    return c.json(issued, 201, { 'cache-control': 'no-store' })
  },
})
