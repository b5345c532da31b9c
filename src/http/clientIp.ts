import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import type { Context } from 'hono'
import { requestHeader } from './requestHeader.ts'

/**
 * Which proxies in front of the service are ours (DESIGN 7.28): how many (`0` trusts none), or their addresses. Only
 * the entries those proxies appended to X-Forwarded-For are believed; the client writes everything to their left.
 */
export type TrustProxy = number | readonly string[]

/** The X-Forwarded-For entries that are IP addresses, left to right; anything else is ignored. */
function forwardedIps(header: string | undefined): string[] {
  if (header === undefined) return []
  return header
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => isIP(entry) !== 0)
}

/**
 * The client's IP as our proxies saw it: with `n` proxies, the entry `n` hops from the right of X-Forwarded-For (each
 * proxy appends the address it received from); with the proxies' addresses, the rightmost entry that is not one of
 * them, and only when the socket's peer is one of them. Falls back to the socket's address.
 */
export function clientIpBehind(trust: TrustProxy, socketAddress: string, forwardedFor: string | undefined): string {
  const entries = forwardedIps(forwardedFor)
  if (typeof trust === 'number') {
    if (trust <= 0 || entries.length === 0) return socketAddress
    return entries[Math.max(entries.length - trust, 0)] ?? socketAddress
  }
  const proxies = new Set(trust)
  if (!proxies.has(socketAddress)) return socketAddress
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as string
    if (!proxies.has(entry)) return entry
  }
  return entries[0] ?? socketAddress
}

/**
 * The caller's IP for per-IP limits: the socket's address, or, behind proxies we run (`trustProxy`), the address they
 * saw (`clientIpBehind`). In-process calls (tests, the MCP server's own client) have no socket; they may name
 * themselves with X-Forwarded-For, else count as one caller.
 */
export function clientIp(c: Context, trustProxy: TrustProxy): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  const header = requestHeader(c, 'x-forwarded-for')
  if (incoming === undefined) return header?.split(',')[0]?.trim() || 'in-process'
  return clientIpBehind(trustProxy, incoming.socket.remoteAddress ?? 'unknown', header)
}
