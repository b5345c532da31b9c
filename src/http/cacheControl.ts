/**
 * Cache-Control of the published documents (the OpenAPI document, the x402 and capability manifests, the portal's
 * script and styles): the same for every caller and changed only by a deploy, so any cache may keep them briefly.
 * Every other answer is `no-store` unless its endpoint says otherwise (requestContext; docs/endpoints.md).
 */
export const PUBLISHED_CACHE = 'public, max-age=300'
