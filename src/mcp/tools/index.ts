import type { Tool } from '../tool.ts'
import { buildSwap } from './buildSwap.ts'
import { corridorIntelligence } from './corridorIntelligence.ts'
import { discoverRoutes } from './discoverRoutes.ts'
import { getQuote } from './getQuote.ts'
import { probeCorridor } from './probeCorridor.ts'
import { trackSwap } from './trackSwap.ts'

/** The MCP server's tools (DESIGN 8), in the order an agent uses them. */
export const TOOLS: readonly Tool[] = [discoverRoutes, probeCorridor, getQuote, buildSwap, trackSwap, corridorIntelligence]
