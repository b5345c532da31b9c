import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getAddress } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList, SanctionsListError } from '../../src/compliance/loadSanctionsList.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const SHIPPED = join(MANIFEST, DEFAULT_SANCTIONS_FILE)

/** SDN entries checked against the source extraction, with the EIP-55 form the source printed. */
const KNOWN_LISTED = [
  { address: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96', who: 'Lazarus Group (Ronin bridge exploit)' },
  { address: '0x57EC89A0C056163A0314e413320f9B3ABe761259', who: 'Garantex Europe' },
  { address: '0x0931cA4D13BB4ba75D9B7132AB690265D749a5E7', who: 'Cryptex' },
  { address: '0xd5ED34b52AC4ab84d8FA8A231a3218bbF01Ed510', who: 'Funnull Technology' },
  { address: '0x7F367cC41522cE07553e823bf3be79A889DEbe1B', who: 'Danil Potekhin' },
] as const

/** Tornado Cash contracts, removed from the SDN list on 2025-03-21: a list still holding them is stale. */
const DELISTED_TORNADO = ['0xd90e2f925DA726b50C4Ed8D0Fb90Ad053324F31b', '0x8589427373D6D84E98730D7795D8f6f8731FDA16']

describe('the shipped list (manifest/sanctioned-addresses.json)', () => {
  const list = loadSanctionsList(SHIPPED)

  it('is dated and names OFAC and the extraction it came from', () => {
    expect(list.asOf).toBe('2026-08-22')
    expect(list.source).toContain('OFAC SDN')
    expect(list.source).toContain('Digital Currency Address - ETH')
    expect(list.source).toMatch(/@[0-9a-f]{40} /)
  })

  it('holds 100 addresses, lowercase, strictly sorted (so unique)', () => {
    expect(list.addresses.length).toBeGreaterThanOrEqual(50)
    expect(list.addresses).toHaveLength(100)
    for (const address of list.addresses) expect(address).toMatch(/^0x[0-9a-f]{40}$/)
    const outOfOrder = list.addresses.filter((address, index) => index > 0 && list.addresses[index - 1]! >= address)
    expect(outOfOrder).toEqual([])
  })

  it.each(KNOWN_LISTED)('contains $address ($who)', ({ address }) => {
    expect(getAddress(address.toLowerCase())).toBe(address)
    expect(list.addresses).toContain(address.toLowerCase())
  })

  it.each(DELISTED_TORNADO)('no longer contains the delisted Tornado Cash contract %s', (address) => {
    expect(list.addresses).not.toContain(address.toLowerCase())
  })
})

describe('loadSanctionsList on malformed files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sanctions-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const A = '0x098b716b8aaf21512996dc57eb0615e2383e2f96'
  const B = '0x57ec89a0c056163a0314e413320f9b3abe761259'
  const valid = { asOf: '2026-08-22', source: 'test fixture', addresses: [A, B] }

  function write(name: string, content: unknown): string {
    const path = join(dir, name)
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
    return path
  }

  function failure(path: string): SanctionsListError {
    try {
      loadSanctionsList(path)
    } catch (error) {
      if (error instanceof SanctionsListError) return error
      throw error
    }
    throw new Error(`expected ${path} to be rejected`)
  }

  it('accepts a well-formed file', () => {
    expect(loadSanctionsList(write('valid.json', valid))).toEqual(valid)
  })

  const NOT_LOWERCASE_HEX = 'must be a lowercase 0x-prefixed 40-hex address'

  it.each([
    ['a checksummed address', { ...valid, addresses: [A, getAddress(B)] }, 'addresses[1]', NOT_LOWERCASE_HEX],
    ['a short address', { ...valid, addresses: [A.slice(0, 41)] }, 'addresses[0]', NOT_LOWERCASE_HEX],
    ['a duplicate', { ...valid, addresses: [A, B, A] }, 'addresses[2]', `duplicate address ${A}`],
    ['two duplicates, naming the first', { ...valid, addresses: [A, B, B, A] }, 'addresses[2]', `duplicate address ${B}`],
    ['no addresses', { ...valid, addresses: [] }, 'addresses', 'must list at least one address'],
    ['a missing asOf', { source: valid.source, addresses: valid.addresses }, 'asOf', 'is required (an ISO date YYYY-MM-DD)'],
    ['an impossible date', { ...valid, asOf: '2026-02-30' }, 'asOf', 'must be an ISO date YYYY-MM-DD'],
    ['a date with a time', { ...valid, asOf: '2026-08-22T00:00:00Z' }, 'asOf', 'must be an ISO date YYYY-MM-DD'],
    ['a blank source', { ...valid, source: '  ' }, 'source', 'must name the source of the list'],
    ['an unknown key', { ...valid, extra: 1 }, '(root)', 'Unrecognized key: "extra"'],
  ])('rejects %s, naming the file and the field', (label, content, field, detail) => {
    const path = write(`${label.replaceAll(' ', '-')}.json`, content)
    const error = failure(path)
    expect(error.message).toBe(`${path}: ${field}: ${detail}`)
    expect({ file: error.file, field: error.field }).toEqual({ file: path, field })
  })

  it('rejects a file that is not JSON', () => {
    const path = write('broken.json', '{"asOf": ')
    const error = failure(path)
    expect(error.field).toBe('(file)')
    expect(error.message.startsWith(`${path}: (file): `)).toBe(true)
  })

  it('says a file is not JSON without quoting it: a variable pointed at a secrets file puts none of it in the line', () => {
    const path = write('secrets.env', 'API_SECRET=hunter2-hunter2\n')
    expect(failure(path).message).toBe(`${path}: (file): is not valid JSON: check that it is the file meant`)
    const cut = write('cut.json', '{"asOf": "2026-11-20", "addresses": [')
    expect(failure(cut).message).toMatch(/^.+: \(file\): is not valid JSON( \(at character \d+\))?: check that it is the file meant$/)
  })

  it('rejects a missing file', () => {
    const path = join(dir, 'absent.json')
    expect(failure(path).message).toMatch(new RegExp(`^${path}: \\(file\\): ENOENT`))
  })

  it('refuses at once what is not a regular file (a FIFO would hang the start, /dev/zero fill the memory), and a huge one', () => {
    const fifo = join(dir, 'list.fifo')
    execFileSync('mkfifo', [fifo])
    for (const path of [fifo, '/dev/zero', dir])
      expect(failure(path).message).toBe(`${path}: (file): is not a regular file (a directory, FIFO or device cannot hold the list)`)
    const huge = join(dir, 'huge.json')
    writeFileSync(huge, '')
    truncateSync(huge, 65 * 2 ** 20)
    expect(failure(huge).message).toMatch(/: \(file\): is 68157440 bytes, more than the 64 MiB allowed for the list/)
    // A file whose size says nothing (a /proc file says 0) is read to one byte past the limit, not to its end.
    expect(failure('/proc/self/pagemap').message).toBe(
      '/proc/self/pagemap: (file): is over 67108864 bytes, more than the 64 MiB allowed for the list',
    )
  })
})
