import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { authenticateApiKey } from '../../src/service/authenticateApiKey.ts'
import { ServiceError } from '../../src/service/serviceError.ts'
import { KEY_SECRET, lazyMemoryStore } from '../http/testApp.ts'

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const deps = { keySecret: KEY_SECRET, store }
const claims = { v: 1 as const, id: 'key_00112233445566778899aabb', tier: 'free' as const, iat: 1_795_000_000 }
const key = signApiKey(KEY_SECRET, claims)

async function reasonOf(candidate: string | undefined): Promise<unknown> {
  try {
    await authenticateApiKey(deps, candidate)
    return 'accepted'
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error
    expect(error.code).toBe('invalid_key')
    expect(error.message).toMatch(/POST \/api\/v1\/keys/)
    return error.detail['reason']
  }
}

describe('authenticateApiKey', () => {
  it('accepts a good key and returns its claims', async () => {
    expect(await authenticateApiKey(deps, key)).toEqual(claims)
  })

  it.each([
    ['missing', undefined, 'missing'],
    ['blank', '  ', 'missing'],
    ['malformed', 'se_not-a-key', 'malformed'],
    ['forged (valid shape, wrong MAC)', signApiKey(new TextEncoder().encode('a-forger-secret-a-forger-secret!!'), claims), 'bad_signature'],
    [
      'altered tier',
      `se_${Buffer.from(JSON.stringify({ ...claims, tier: 'pro' })).toString('base64url')}.${key.split('.')[1]}`,
      'bad_signature',
    ],
  ])('refuses a %s key with 401 invalid_key', async (_name, candidate, reason) => {
    expect(await reasonOf(candidate)).toBe(reason)
  })

  it('refuses a revoked key, and only that one', async () => {
    const other = signApiKey(KEY_SECRET, { ...claims, id: 'key_ffeeddccbbaa998877665544' })
    expect(await store.keys.revoke(claims.id, new Date())).toBe(true)
    expect(await store.keys.revoke(claims.id, new Date())).toBe(false)
    expect(await reasonOf(key)).toBe('revoked')
    expect(await reasonOf(other)).toBe('accepted')
  })
})
