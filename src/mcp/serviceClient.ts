import { FREE_KEY_RAISES_LIMIT } from '../schemas/keys.ts'

/** A fetch: the global one for a remote service, or the in-process app's (no socket). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

/** What the service answered: status, the parsed JSON body (undefined when not JSON) and the headers. */
export type ServiceResponse = { status: number; body: unknown; headers: Headers }

/**
 * How the MCP tools reach SwapEazi (DESIGN 8): the same HTTP endpoints, over `SWAPEAZI_BASE_URL` or the in-process
 * app. Headers are plain objects and bodies strings, as x402-fetch needs for its paid retry.
 */
export type ServiceClient = {
  baseUrl: string
  fetch: FetchLike
  get(path: string, headers?: Record<string, string>): Promise<ServiceResponse>
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<ServiceResponse>
}

/** Reads a response as JSON when it says it is JSON; undefined otherwise (the caller reports the status). */
export async function readServiceResponse(response: Response): Promise<ServiceResponse> {
  const text = await response.text()
  let body: unknown
  if (/json/i.test(response.headers.get('content-type') ?? '')) {
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
  }
  return { status: response.status, body, headers: response.headers }
}

export function createServiceClient(baseUrl: string, fetchImpl: FetchLike): ServiceClient {
  const base = baseUrl.replace(/\/$/, '')
  return {
    baseUrl: base,
    fetch: fetchImpl,
    async get(path, headers = {}) {
      return readServiceResponse(await fetchImpl(`${base}${path}`, { method: 'GET', headers: { accept: 'application/json', ...headers } }))
    },
    async post(path, body, headers = {}) {
      return readServiceResponse(
        await fetchImpl(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
          body: JSON.stringify(body),
        }),
      )
    },
  }
}

/** A header that already carries a key: the call's own key wins over the configured one. */
const KEY_HEADER = /^(authorization|x-swapeazi-key)$/i

/**
 * The client that sends `apiKey` (the operator's SWAPEAZI_API_KEY), as an `Authorization: Bearer` header, on every
 * /api/v1/* call that carries no key of its own, so those calls are counted under the key's limit (and served at its
 * tier) rather than the anonymous per-IP limit. The x402 rail and the manifest take no key. Without a key, the client
 * as it is. The key is only ever a header: nothing here logs it.
 */
export function withApiKey(client: ServiceClient, apiKey: string | undefined): ServiceClient {
  if (apiKey === undefined) return client
  const keyed = (path: string, headers: Record<string, string> = {}): Record<string, string> =>
    path.startsWith('/api/v1/') && !Object.keys(headers).some((name) => KEY_HEADER.test(name))
      ? { ...headers, authorization: `Bearer ${apiKey}` }
      : headers
  return {
    ...client,
    get: (path, headers) => client.get(path, keyed(path, headers)),
    post: (path, body, headers) => client.post(path, body, keyed(path, headers)),
  }
}

/**
 * What an MCP tool says instead of the 429's `FREE_KEY_RAISES_LIMIT`: a tool's caller cannot send a key, only the
 * operator can configure one (and on /mcp, share it).
 */
export const MCP_FREE_KEY_ADVICE =
  'ask the operator of this MCP server to raise it: set a free key (POST /api/v1/keys) in SWAPEAZI_API_KEY, plus SWAPEAZI_MCP_SHARE_API_KEY=true when agents call the server over HTTP at /mcp.'

/**
 * The in-process app as a fetch: `app.fetch` on a Request built from the URL, no socket. `forwardedFor` names the
 * caller the request is made for (X-Forwarded-For, which the app reads only on in-process requests), so per-IP
 * limits count the remote agent, not this server.
 */
export function inProcessFetch(appFetch: (request: Request) => Response | Promise<Response>, forwardedFor?: string): FetchLike {
  return async (input, init) => {
    if (forwardedFor === undefined) return appFetch(new Request(input, init))
    const headers = new Headers(init?.headers)
    headers.set('x-forwarded-for', forwardedFor)
    return appFetch(new Request(input, { ...init, headers }))
  }
}

/**
 * What went wrong, for a tool's error text: the problem's `detail` (our errors say what to do next) with its code,
 * or the status when the body is not a problem. Never the request's headers or keys. Advice that only an HTTP caller
 * can follow (send a key) is said as what the operator of this MCP server can do.
 */
export function describeFailure(response: ServiceResponse): string {
  const body = response.body as { code?: unknown; detail?: unknown; title?: unknown; errors?: unknown } | undefined
  if (body !== undefined && typeof body.detail === 'string') {
    const code = typeof body.code === 'string' ? ` (${body.code})` : ''
    const fields = Array.isArray(body.errors)
      ? ` Fields: ${(body.errors as { field?: unknown; message?: unknown }[]).map((e) => `${String(e.field)} ${String(e.message)}`).join('; ')}.`
      : ''
    return `SwapEazi answered ${response.status}${code}: ${body.detail.replace(FREE_KEY_RAISES_LIMIT, MCP_FREE_KEY_ADVICE)}${fields}`
  }
  return `SwapEazi answered HTTP ${response.status} with no problem details; retry later, or check SWAPEAZI_BASE_URL points at a SwapEazi service.`
}
