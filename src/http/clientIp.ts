import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import type { Context } from 'hono'
import { requestHeader } from './requestHeader.ts'

/**
 * Which proxies in front of the service are ours (DESIGN 7.28): how many (`0` trusts none), or their addresses. Only
 * the entries those proxies appended to X-Forwarded-For are believed; the client writes everything to their left.
 */
export type TrustProxy = number | readonly string[]

/** An IPv6 address's eight 16-bit groups (`::` expanded, a dotted IPv4 tail as two groups); undefined if not IPv6. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined
  let text = address
  const tail: number[] = []
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = (dotted[1] as string).split('.').map(Number) as [number, number, number, number]
    tail.push((a << 8) | b, (c << 8) | d)
    // `::ffff:1.2.3.4` leaves `::ffff`; `::1.2.3.4` and `a::1.2.3.4` keep their `::`.
    text = text.slice(0, dotted.index)
    if (text.endsWith(':')) text = `${text}:`
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)))
  const gap = text.indexOf('::')
  const head = parse(gap === -1 ? text : text.slice(0, gap))
  const rest = gap === -1 ? [] : parse(text.slice(gap + 2))
  const zeros = Array.from({ length: 8 - tail.length - head.length - rest.length }, () => 0)
  return [...head, ...(gap === -1 ? [] : zeros), ...rest, ...tail]
}

/**
 * The address per-source limits count (issue 15): an IPv4 address as itself; an IPv4-mapped IPv6 address
 * (`::ffff:203.0.113.7`, how a socket listening on `::` sees an IPv4 client) as that IPv4 address; any other IPv6
 * address as its /64 prefix (`2001:db8:1:2::/64`), since every IPv6 client is given at least a /64 and picks the
 * rest of its address at will. A zone id (`fe80::1%eth0`) is dropped. Anything that is not an IP address (an
 * in-process caller) is returned as it is.
 */
export function limitedAddress(address: string): string {
  const unzoned = address.includes('%') ? address.slice(0, address.indexOf('%')) : address
  const groups = ipv6Groups(unzoned)
  if (groups === undefined) return isIP(unzoned) === 4 ? unzoned : address
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number]
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`
  return `${[g0, g1, g2, g3].map((group) => group.toString(16)).join(':')}::/64`
}

/**
 * One spelling per address, to compare a proxy's address however it is written: an IPv4-mapped IPv6 address as its
 * IPv4 address, any other IPv6 address as its eight groups in lower-case hex (`2001:DB8::1` and
 * `2001:0db8:0:0:0:0:0:1` alike), without a zone; anything else as it is.
 */
function canonicalAddress(address: string): string {
  const limited = limitedAddress(address)
  if (isIP(limited) === 4) return limited
  const unzoned = address.includes('%') ? address.slice(0, address.indexOf('%')) : address
  return (
    ipv6Groups(unzoned)
      ?.map((group) => group.toString(16))
      .join(':') ?? address
  )
}

/**
 * An X-Forwarded-For entry's IP address: a bare address, or one with the port some proxies append (`203.0.113.7:5555`,
 * `[2001:db8::1]:443`, `[2001:db8::1]`); undefined for anything else (`unknown`, an obfuscated id, garbage).
 */
export function forwardedAddress(entry: string): string | undefined {
  if (isIP(entry) !== 0) return entry
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry)
  if (bracketed !== null) return isIP(bracketed[1] as string) === 6 ? bracketed[1] : undefined
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry)
  return withPort !== null && isIP(withPort[1] as string) === 4 ? withPort[1] : undefined
}

/**
 * The X-Forwarded-For entries, left to right, every one kept in its place: hops are counted over all of them, so an
 * entry a proxy wrote that is not an address (`unknown`) still counts as that proxy's, and the client's own entries
 * to its left never move into its place.
 */
function forwardedEntries(header: string | undefined): string[] {
  if (header === undefined || header.trim() === '') return []
  return header.split(',').map((entry) => entry.trim())
}

/**
 * The client's IP as our proxies saw it: with `n` proxies, the entry `n` hops from the right of X-Forwarded-For (each
 * proxy appends the address it received from); with the proxies' addresses, the rightmost entry that is not one of
 * them, and only when the socket's peer is one of them. When that entry is not an IP address (a proxy that writes
 * `unknown`), or there is no header, the socket's address: never an entry further left, which the client wrote.
 */
export function clientIpBehind(trust: TrustProxy, socketAddress: string, forwardedFor: string | undefined): string {
  const entries = forwardedEntries(forwardedFor)
  if (typeof trust === 'number') {
    if (trust <= 0 || entries.length === 0) return socketAddress
    const entry = entries[Math.max(entries.length - trust, 0)] as string
    return forwardedAddress(entry) ?? socketAddress
  }
  // A proxy's address matches it however it is written (a socket on `::` sees `::ffff:10.0.0.2`; IPv6 in any case
  // and compression).
  const proxies = new Set(trust.map(canonicalAddress))
  if (!proxies.has(canonicalAddress(socketAddress))) return socketAddress
  for (let index = entries.length - 1; index >= 0; index--) {
    const address = forwardedAddress(entries[index] as string)
    if (address === undefined) return socketAddress
    if (!proxies.has(canonicalAddress(address))) return address
  }
  const leftmost = entries[0]
  return (leftmost === undefined ? undefined : forwardedAddress(leftmost)) ?? socketAddress
}

/**
 * The caller's address for per-source limits (every per-IP limit, quota and count takes it from here): the socket's
 * address, or, behind proxies we run (`trustProxy`), the address they saw (`clientIpBehind`), as `limitedAddress`
 * counts it (an IPv6 client by its /64). In-process calls (tests, the MCP server's own client) have no socket; they
 * may name themselves with X-Forwarded-For, else count as one caller.
 */
export function clientIp(c: Context, trustProxy: TrustProxy): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  const header = requestHeader(c, 'x-forwarded-for')
  if (incoming === undefined) return limitedAddress(header?.split(',')[0]?.trim() || 'in-process')
  return limitedAddress(clientIpBehind(trustProxy, incoming.socket.remoteAddress ?? 'unknown', header))
}
