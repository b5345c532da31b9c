import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { cellStatus } from '../../src/engine/index.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const DOC = new URL('../../docs/corridors.md', import.meta.url).pathname

const { catalogue } = loadCatalogue(MANIFEST)
const doc = readFileSync(DOC, 'utf8')

type DocRow = { from: string; to: string; chain: string; access: string; served: string; why: string }

/** The rows of the doc's cell table (the one headed `| From | To | Chain |`), each cell trimmed. */
function docRows(markdown: string): DocRow[] {
  const lines = markdown.split('\n')
  const header = lines.findIndex((line) => /^\|\s*From\s*\|\s*To\s*\|\s*Chain\s*\|/.test(line))
  if (header < 0) throw new Error('docs/corridors.md has no | From | To | Chain | table')
  const rows: DocRow[] = []
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break
    const [from = '', to = '', chain = '', access = '', served = '', why = ''] = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim())
    rows.push({ from, to, chain, access, served, why })
  }
  return rows
}

/** What the doc must say of each cell, recomputed from the catalogue. */
function expectedRows(): DocRow[] {
  return catalogue.corridors.flatMap((row) =>
    row.chains.map((chain): DocRow => {
      const cell = { from: row.from, to: row.to, chain }
      if (!row.agentCallable) return { ...cell, access: 'App-only, user-signed', served: 'app only', why: '' }
      const status = cellStatus(catalogue, row, chain)
      return status.isServed
        ? { ...cell, access: 'Agent-callable', served: 'yes', why: '' }
        : { ...cell, access: 'Agent-callable', served: 'no', why: `\`${status.reason}\`: ${status.detail}` }
    }),
  )
}

describe('docs/corridors.md', () => {
  const rows = docRows(doc)
  const expected = expectedRows()
  const hint = `docs/corridors.md is out of date; the cells now read:\n${expected
    .map((row) => `${row.from} ${row.to} ${row.chain}: ${row.served} ${row.why}`)
    .join('\n')}`

  it('has one row per corridor row × chain of manifest/corridors.json, in order', () => {
    expect(
      rows.map((row) => `${row.from} ${row.to} ${row.chain}`),
      hint,
    ).toEqual(expected.map((row) => `${row.from} ${row.to} ${row.chain}`))
  })

  it('states each cell as cellStatus computes it: served or not, and why, with the figures', () => {
    expected.forEach((want, index) => {
      const got = rows[index]
      const cell = `${want.from} ${want.to} ${want.chain}`
      expect(got?.access, `${cell}: access`).toBe(want.access)
      expect(got?.served, `${cell}: served now\n${hint}`).toBe(want.served)
      // A served cell gives no reason; a cell not served gives cellStatus's reason code and detail (its figures).
      if (want.served === 'yes') expect(got?.why, `${cell}: why`).toBe('')
      if (want.served === 'no') expect(got?.why, `${cell}: why\n${hint}`).toBe(want.why)
      if (want.served === 'app only') expect(got?.why, `${cell}: why`).toContain('not_agent_callable')
    })
  })

  it('gives the true count of served agent-callable cells and the figures of each cost refusal', () => {
    const agentCells = catalogue.corridors.flatMap((row) => (row.agentCallable ? row.chains.map((chain) => ({ row, chain })) : []))
    const statuses = agentCells.map(({ row, chain }) => cellStatus(catalogue, row, chain))
    const served = statuses.filter((status) => status.isServed).length
    expect(doc).toContain(`**Today: ${served} of ${agentCells.length} agent-callable cells are served.**`)
    for (const status of statuses) {
      if (status.isServed || status.reason !== 'cost_exceeds_fee') continue
      expect(doc).toContain(`about ${status.costBps} bps`)
      expect(doc).toContain(`${status.feeBps} bps`)
    }
  })
})
