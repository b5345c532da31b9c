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

  it('never takes an entry that is not an IP address: the socket address instead, never one further left', () => {
    // The entry our proxy wrote is `unknown`: the client's entries to its left must not move into its place.
    expect(clientIpBehind(1, SOCKET, '203.0.113.7, not-an-ip, unknown')).toBe(SOCKET)
    for (let i = 0; i < 5; i++) expect(clientIpBehind(1, SOCKET, `10.5.5.${i}, unknown`)).toBe(SOCKET)
    expect(clientIpBehind(2, SOCKET, '10.5.5.1, unknown, 10.0.0.2')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, '203.0.113.7, , ')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, 'garbage')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, '')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, undefined)).toBe(SOCKET)
    // Entries the client wrote further left are skipped over as they are, whatever they hold.
    expect(clientIpBehind(1, SOCKET, 'unknown, garbage, 203.0.113.7')).toBe('203.0.113.7')
  })

  it('reads the address of an entry a proxy wrote with its port, IPv4 or bracketed IPv6', () => {
    // Review of issue 15: an `IP:port` entry used to be dropped, so the client's own entry took its place.
    for (let i = 0; i < 5; i++) expect(clientIpBehind(1, SOCKET, `10.8.8.${i}, 203.0.113.77:5555`)).toBe('203.0.113.77')
    for (let i = 0; i < 5; i++) expect(clientIpBehind(1, SOCKET, `10.7.7.${i}, [2001:db8:9::1]:443`)).toBe('2001:db8:9::1')
    expect(clientIpBehind(1, SOCKET, '[2001:db8:9::1]')).toBe('2001:db8:9::1')
    expect(clientIpBehind(1, SOCKET, '2001:db8:9::1')).toBe('2001:db8:9::1')
    // Not addresses: a bracketed IPv4, a port out of shape, an IPv6 address with a port and no brackets is itself.
    expect(clientIpBehind(1, SOCKET, '[203.0.113.7]:80')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, '203.0.113.7:port')).toBe(SOCKET)
    expect(clientIpBehind(1, SOCKET, '999.0.113.7:80')).toBe(SOCKET)
  })

  it('with fewer entries than proxies takes the leftmost, the farthest any proxy saw', () => {
    expect(clientIpBehind(3, SOCKET, '203.0.113.7, 10.0.0.2')).toBe('203.0.113.7')
  })

  it('with the proxies named: the rightmost entry that is not one of them, and only from one of them', () => {
    const proxies = ['10.0.0.9', '10.0.0.2']
    expect(clientIpBehind(proxies, SOCKET, '10.9.9.1, 203.0.113.7, 10.0.0.2')).toBe('203.0.113.7')
    // A peer that is not our proxy: its header is the client's own words.
    expect(clientIpBehind(proxies, '198.51.100.4', '203.0.113.7')).toBe('198.51.100.4')
    // Our proxy's entry with its port, or not an address: never the client's entry to its left.
    expect(clientIpBehind(proxies, SOCKET, '10.9.9.1, 203.0.113.7:4000, 10.0.0.2:80')).toBe('203.0.113.7')
    expect(clientIpBehind(proxies, SOCKET, '10.9.9.1, unknown, 10.0.0.2')).toBe(SOCKET)
    // Review of issue 15: IPv6 proxies were compared as text, so case or compression made a proxy a stranger.
    const v6 = ['2001:DB8::1', '2001:db8::5']
    expect(clientIpBehind(v6, '2001:db8::1', '203.0.113.7')).toBe('203.0.113.7')
    expect(clientIpBehind(v6, '2001:0db8:0:0:0:0:0:1', '203.0.113.7, 2001:0DB8:0:0:0:0:0:5')).toBe('203.0.113.7')
    expect(clientIpBehind(v6, '2001:db8::2', '203.0.113.7')).toBe('2001:db8::2')
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
