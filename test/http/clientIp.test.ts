import { describe, expect, it } from 'vitest'
import { clientIpBehind, limitedAddress } from '../../src/http/clientIp.ts'

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

// Review of issue 15, defect 3: per-source limits count an IPv6 client by its /64, an IPv4-mapped address as IPv4.
describe('limitedAddress', () => {
  it('keeps an IPv4 address, and turns an IPv4-mapped IPv6 address into it, dotted or in hex, any case', () => {
    expect(limitedAddress('203.0.113.7')).toBe('203.0.113.7')
    expect(limitedAddress('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(limitedAddress('::FFFF:203.0.113.7')).toBe('203.0.113.7')
    expect(limitedAddress('::ffff:cb00:7107')).toBe('203.0.113.7')
    expect(limitedAddress('0:0:0:0:0:ffff:cb00:7107')).toBe('203.0.113.7')
  })

  it('masks other IPv6 addresses to their /64, with :: compression, leading zeros and zone ids handled', () => {
    const slash64 = '2001:db8:1:2::/64'
    for (const address of [
      '2001:db8:1:2::1',
      '2001:0db8:0001:0002:ffff:0:0:1',
      '2001:DB8:1:2:a:b:c:d',
      '2001:db8:1:2::',
      '2001:db8:1:2:0:0:1.2.3.4',
    ])
      expect(limitedAddress(address)).toBe(slash64)
    expect(limitedAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64')
    expect(limitedAddress('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(limitedAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(limitedAddress('fe80::2%2')).toBe('fe80:0:0:0::/64')
    expect(limitedAddress('::1')).toBe('0:0:0:0::/64')
    expect(limitedAddress('::')).toBe('0:0:0:0::/64')
    // Not IPv4-mapped: a NAT64 or IPv4-compatible address is IPv6.
    expect(limitedAddress('64:ff9b::203.0.113.7')).toBe('64:ff9b:0:0::/64')
    expect(limitedAddress('::203.0.113.7')).toBe('0:0:0:0::/64')
  })

  it('leaves what is not an IP address as it is (in-process callers)', () => {
    expect(limitedAddress('in-process')).toBe('in-process')
    expect(limitedAddress('unknown')).toBe('unknown')
  })

  it('matches a named proxy written as IPv4 when the socket sees it IPv4-mapped', () => {
    expect(clientIpBehind(['10.0.0.9'], '::ffff:10.0.0.9', '203.0.113.7')).toBe('203.0.113.7')
    expect(clientIpBehind(['10.0.0.9'], '10.0.0.9', '203.0.113.7, ::ffff:10.0.0.9')).toBe('203.0.113.7')
  })
})
