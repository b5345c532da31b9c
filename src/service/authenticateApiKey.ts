import { type ApiKeyClaims, verifyApiKey } from '../auth/apiKey.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

const GET_ONE = 'Get a free key at POST /api/v1/keys (or the portal form at /).'

/**
 * DESIGN 7.14-7.15: a key is checked statelessly (shape, then the MAC, timing-safe), then against the revocation
 * denylist. Missing, malformed, forged, altered and revoked keys are all 401 `invalid_key`, each with its own message.
 */
export async function authenticateApiKey(deps: Pick<ServiceDeps, 'keySecret' | 'store'>, key: string | undefined): Promise<ApiKeyClaims> {
  const claims = verifyKeySignature(deps, key)
  if (await deps.store.keys.isRevoked(claims.id)) throw revokedKeyError(claims.id)
  return claims
}

/** The stateless half of `authenticateApiKey`: shape and MAC. The caller still checks the denylist. */
export function verifyKeySignature(deps: Pick<ServiceDeps, 'keySecret'>, key: string | undefined): ApiKeyClaims {
  if (key === undefined || key.trim() === '') throw missingKeyError()
  const verified = verifyApiKey(deps.keySecret, key.trim())
  if (!verified.ok) throw invalidKeyError(verified.reason, key)
  return verified.claims
}

/** The 401 for a key that fails `verifyApiKey`: an empty one is missing, otherwise malformed or forged. */
export function invalidKeyError(reason: 'malformed' | 'bad_signature', key: string): ServiceError {
  if (key.trim() === '') return missingKeyError()
  return new ServiceError(
    'invalid_key',
    reason === 'malformed'
      ? `The API key is not a SwapEazi key (se_<payload>.<signature>); check it was copied whole. ${GET_ONE}`
      : `The API key's signature does not match: it was altered or not issued by this service. ${GET_ONE}`,
    { reason },
  )
}

/** 401 for a route that needs a key when none was sent. */
export const missingKeyError = (): ServiceError =>
  new ServiceError('invalid_key', `No API key was sent: send it in the x-swapeazi-key header (or as Authorization: Bearer). ${GET_ONE}`, {
    reason: 'missing',
  })

/** 401 for a request that sent two different keys, one in x-swapeazi-key and one as Authorization: Bearer. */
export const conflictingKeysError = (): ServiceError =>
  new ServiceError(
    'invalid_key',
    'Two different API keys were sent, one in x-swapeazi-key and one as Authorization: Bearer: send one key, in one of them.',
    { reason: 'conflicting' },
  )

export const revokedKeyError = (id: string): ServiceError =>
  new ServiceError('invalid_key', `The API key ${id} has been revoked. ${GET_ONE}`, { reason: 'revoked' })
