import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { TOOLS } from '../../src/mcp/tools/index.ts'

// The docs count the MCP tools in words ("six tools", "the five free tools", "the other five tools"): each count
// must match src/mcp/tools, so a tool added or removed makes the docs that count them fail here.

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten']
const COUNTED = /\b(other\s+)?(zero|one|two|three|four|five|six|seven|eight|nine|ten)\s+(free\s+)?(?:MCP\s+)?tools\b/gi

/** Every tool count in `text`, with what it says and what it should say. */
function countsIn(text: string): { said: string; count: number; expected: number }[] {
  const free = TOOLS.filter((tool) => tool.paid !== true).length
  return [...text.matchAll(COUNTED)].map((match) => {
    const [said, other, word, isFree] = match
    const expected = isFree !== undefined ? free : other !== undefined ? TOOLS.length - 1 : TOOLS.length
    return { said: said.replace(/\s+/g, ' '), count: WORDS.indexOf((word ?? '').toLowerCase()), expected }
  })
}

describe('the docs count the MCP tools', () => {
  for (const path of ['README.md', 'docs/mcp.md']) {
    it(`${path} gives every count of the tools as src/mcp/tools holds them`, () => {
      const counts = countsIn(readFileSync(path, 'utf8'))
      expect(counts.length).toBeGreaterThan(0)
      expect(counts.filter(({ count, expected }) => count !== expected)).toEqual([])
    })
  }
})
