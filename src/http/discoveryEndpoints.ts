import { CapabilityManifest, ChainsResponse, CorridorsResponse, Health } from '../schemas/discovery.ts'
import { describeCapabilities } from '../service/describeCapabilities.ts'
import { getHealth } from '../service/getHealth.ts'
import { listChains } from '../service/listChains.ts'
import { listCorridors } from '../service/listCorridors.ts'
import { PUBLISHED_CACHE } from './cacheControl.ts'
import { defineEndpoint } from './endpoint.ts'
import { jsonResponse } from './openapiDoc.ts'

/** GET /api/mpp/routes (spec 2.7). */
export const getCapabilities = defineEndpoint({
  method: 'GET',
  path: '/api/mpp/routes',
  doc: {
    summary: 'Capability manifest (spec 2.7)',
    operationId: 'getCapabilities',
    responses: { 200: jsonResponse(CapabilityManifest, 'Capability manifest') },
  },
  handler: (deps) => (c) => c.json(describeCapabilities(deps), 200, { 'cache-control': PUBLISHED_CACHE }),
})

export const getHealthEndpoint = defineEndpoint({
  method: 'GET',
  path: '/api/v1/health',
  doc: {
    summary: 'Health, snapshot age and the EUR/ZAR rate',
    operationId: 'getHealth',
    responses: { 200: jsonResponse(Health, 'Health') },
  },
  handler: (deps) => (c) => c.json(getHealth(deps)),
})

export const listChainsEndpoint = defineEndpoint({
  method: 'GET',
  path: '/api/v1/chains',
  doc: {
    summary: 'Networks with their tokens, addresses and decimals',
    operationId: 'listChains',
    responses: { 200: jsonResponse(ChainsResponse, 'Chains') },
  },
  handler: (deps) => (c) => c.json(listChains(deps)),
})

export const listCorridorsEndpoint = defineEndpoint({
  method: 'GET',
  path: '/api/v1/corridors',
  doc: {
    summary: 'Corridors with live routing metadata',
    operationId: 'listCorridors',
    responses: { 200: jsonResponse(CorridorsResponse, 'Corridors') },
  },
  handler: (deps) => (c) => c.json(listCorridors(deps)),
})
