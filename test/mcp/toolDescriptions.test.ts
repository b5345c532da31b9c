import { describe, expect, it } from 'vitest'
import { TOOLS } from '../../src/mcp/tools/index.ts'

// A model reads these descriptions before it calls: toAmountMin is guaranteed only where no swap follows the bridge
// (after one, the recipient may get the bridged token instead: DestinationFallback), so none may call it guaranteed.

describe('MCP tool descriptions', () => {
  it('call toAmountMin no guarantee, and say what happens when a swap follows the bridge', () => {
    const quoting = TOOLS.filter((tool) => tool.description.includes('toAmountMin'))
    expect(quoting.map((tool) => tool.name).sort()).toEqual(['build_swap', 'get_quote'])
    for (const tool of quoting) {
      expect(tool.description).not.toMatch(/guarantee/i)
      expect(tool.description).toContain('the recipient gets the bridged token')
    }
  })
})
