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
 * or the status when the body is not a problem. Never the request's headers or keys.
 */
export function describeFailure(response: ServiceResponse): string {
  const body = response.body as { code?: unknown; detail?: unknown; title?: unknown; errors?: unknown } | undefined
  if (body !== undefined && typeof body.detail === 'string') {
    const code = typeof body.code === 'string' ? ` (${body.code})` : ''
    const fields = Array.isArray(body.errors)
      ? ` Fields: ${(body.errors as { field?: unknown; message?: unknown }[]).map((e) => `${String(e.field)} ${String(e.message)}`).join('; ')}.`
      : ''
    return `SwapEazi answered ${response.status}${code}: ${body.detail}${fields}`
  }
  return `SwapEazi answered HTTP ${response.status} with no problem details; retry later, or check SWAPEAZI_BASE_URL points at a SwapEazi service.`
}
