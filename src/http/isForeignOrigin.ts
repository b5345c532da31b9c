import { isIP } from 'node:net'

/** What a request's `Origin` is held against: the service's public origin and the host the request was sent to. */
export type OwnOrigins = {
  /** The origin of the service's public URL (`SWAPEAZI_PUBLIC_URL`), e.g. `https://swapeazi.example`. */
  publicOrigin: string
  /** The host (and port) the request was sent to, as its URL carries it. */
  requestHost: string
  /**
   * The host names a browser may reach the service by (lower case, no port): an Origin equal to the request's own
   * host must also be one of them, or an IP address, since a page that rebinds its own name to our address sends
   * Host and Origin alike (DNS rebinding).
   */
  allowedHostnames: ReadonlySet<string>
}

/**
 * Whether a request comes from a page of another site: its `Origin` is neither the service's public origin nor the
 * host the request was sent to (the portal's own page however it was reached, on a loopback port or behind a proxy
 * that keeps Host, where TLS may end before us, so the scheme is not compared). No Origin (curl, programs) is not
 * foreign; an opaque one (`null`, a sandboxed frame or a file) is.
 */
export function isForeignOrigin(origin: string | undefined, own: OwnOrigins): boolean {
  if (origin === undefined || origin === own.publicOrigin) return false
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return true
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return true
  if (url.host !== own.requestHost.toLowerCase()) return true
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return isIP(hostname) === 0 && !own.allowedHostnames.has(hostname)
}

/** The host names of `hosts` (`name`, `name:port`, `[v6]`), lower case, and always `localhost`. */
export function allowedHostnamesOf(hosts: readonly string[], publicUrl: string): ReadonlySet<string> {
  const names = new Set(['localhost', new URL(publicUrl).hostname.toLowerCase()])
  for (const host of hosts)
    try {
      names.add(new URL(`http://${host}`).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1'))
    } catch {}
  return names
}
