import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { compileSolidity, type CompileSolidityReturnType } from '../../src/contracts/compileSolidity.ts'

const CONTRACTS_DIR = new URL('./contracts/', import.meta.url)
const COMPILER_SOURCE = new URL('../../src/contracts/compileSolidity.ts', import.meta.url)
const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/swapeazi-solc/', import.meta.url))

const source = (file: string): string => readFileSync(new URL(file, CONTRACTS_DIR), 'utf8')

/**
 * The compilations the tests deploy from test/chain/contracts, optimizer off (it triples solc-js compile time and
 * gas does not matter to stand-ins): every file together for the stand-ins (test/chain/standIns.ts), and
 * Eip3009Token.sol alone for Base's USDC (test/chain/baseUsdc.ts).
 */
const UNITS = {
  standIns: () =>
    Object.fromEntries(
      readdirSync(CONTRACTS_DIR)
        .filter((file) => file.endsWith('.sol'))
        .map((file) => [file, source(file)]),
    ),
  eip3009Token: () => ({ 'Eip3009Token.sol': source('Eip3009Token.sol') }),
} satisfies Record<string, () => Record<string, string>>

export type TestContractUnit = keyof typeof UNITS

const compiled = new Map<TestContractUnit, CompileSolidityReturnType>()

/**
 * One unit compiled, from a cache keyed on everything the output depends on: the sources, the solc release
 * installed and src/contracts/compileSolidity.ts (settings). test/support/globalSetup.ts fills it before a run, so
 * solc-js runs once per run at most, not once per test file; a change to any of these compiles afresh.
 */
export function compiledTestContracts(unit: TestContractUnit): CompileSolidityReturnType {
  const known = compiled.get(unit)
  if (known) return known
  const sources = UNITS[unit]()
  const solc = (createRequire(import.meta.url)('solc/package.json') as { version: string }).version
  const key = createHash('sha256')
    .update(JSON.stringify({ sources, optimizerRuns: 0, solc, compiler: readFileSync(COMPILER_SOURCE, 'utf8') }))
    .digest('hex')
  const file = `${CACHE_DIR}${unit}-${key.slice(0, 32)}.json`
  let output: CompileSolidityReturnType
  try {
    output = JSON.parse(readFileSync(file, 'utf8')) as CompileSolidityReturnType
  } catch {
    output = compileSolidity({ sources, optimizerRuns: 0 })
    try {
      mkdirSync(CACHE_DIR, { recursive: true })
      // Renamed into place, so a concurrent reader never sees half a file.
      const partial = `${file}.${process.pid}.partial`
      writeFileSync(partial, JSON.stringify(output))
      renameSync(partial, file)
    } catch {
      // No cache (a read-only node_modules): every process compiles for itself, as without one.
    }
  }
  compiled.set(unit, output)
  return output
}

/** Every unit compiled into the cache (test/support/globalSetup.ts). */
export function compileTestContracts(): void {
  for (const unit of Object.keys(UNITS) as TestContractUnit[]) compiledTestContracts(unit)
}
