import { describe, expect, it } from 'vitest'
import { clientIpBehind } from '../../src/http/clientIp.ts'

// DESIGN 7.28: only the entries our own proxies appended to X-Forwarded-For are believed; the client writes the rest.
describe('clientIpBehind', () => {
  const SOCKET = '10.0.0.9'

  it('trusts nothing with 0 proxies: the socket address, whatever the header says', () => {
    expect(clientIpBehind(0, SOCKET, '203.0.113.7')).toBe(SOCKET)
  })

  it('with one proxy takes the rightmost entry, so an entry the client wrote cannot pick its own IP', () => {
    expect(clientIpBehind(1, SOCKET, '203.0.113.7')).toBe('203.0.113.7')
    // The attack: X-Forwarded-For: 10.9.9.$i, 203.0.113.7 — every request is still the same client.
    for (let i = 0; i < 5; i++) expect(clientIpBehind(1, SOCKET, `10.9.9.${i}, 203.0.113.7`)).toBe('203.0.113.7')
  })

  it('with two proxies takes the entry two hops from the right', () => {
    expect(clientIpBehind(2, SOCKET, '198.51.100.1, 203.0.113.7, 10.0.0.2')).toBe('203.0.113.7')
  })

  it('ignores entries that are not IP addresses', () => {
    expect(clientIpBehind(1, SOCKET, '203.0.113.7, not-an-ip, unknown')).toBe('203.0.113.7')
    expect(clientIpBehind(1, SOCKET, 'garbage')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, undefined)).toBe(SOCKET)
  })

  it('with fewer entries than proxies takes the leftmost, the farthest any proxy saw', () => {
    expect(clientIpBehind(3, SOCKET, '203.0.113.7, 10.0.0.2')).toBe('203.0.113.7')
  })

  it('with the proxies named: the rightmost entry that is not one of them, and only from one of them', () => {
    const proxies = ['10.0.0.9', '10.0.0.2']
    expect(clientIpBehind(proxies, SOCKET, '10.9.9.1, 203.0.113.7, 10.0.0.2')).toBe('203.0.113.7')
    // A peer that is not our proxy: its header is the client's own words.
    expect(clientIpBehind(proxies, '198.51.100.4', '203.0.113.7')).toBe('198.51.100.4')
  })
})
