import { createHmac } from 'node:crypto'

/**
 * A keyed hash of a client's IP, so per-IP limits and quotas are kept without storing the address. The key is the
 * service's API key secret: the same IP hashes the same on every replica.
 */
export function hashClientIp(secret: Uint8Array, ip: string): string {
  return createHmac('sha256', secret).update(`ip:${ip}`).digest('hex')
}
