import { createRequire } from 'node:module'
import type { Abi, Hex } from 'viem'

/** The compiler release every contract of ours is built with; the artifact test pins it. */
export const SOLC_VERSION = '0.8.37'
/** Cancun: the EVM version of every chain we route on, and anvil's default. */
export const EVM_VERSION = 'cancun'

export type CompiledContract = { abi: Abi; bytecode: Hex; deployedBytecode: Hex }

export type CompileSolidityParameters = {
  /** Source files by path as imports name them, e.g. `SwapEaziRouter.sol`. */
  sources: Readonly<Record<string, string>>
  /** Optimizer runs; 0 turns the optimizer off. */
  optimizerRuns?: number
  /** Receives each compiler warning; the router build treats any as a failure. */
  onWarning?: (message: string) => void
}

/** Compiled contracts by `path:ContractName`. */
export type CompileSolidityReturnType = Readonly<Record<string, CompiledContract>>

type SolcOutput = {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
}

type Solc = { version(): string; compile(input: string): string }

let solc: Solc | undefined

/** Loads the bundled solc-js compiler (WASM, no download) and checks its release. */
function loadSolc(): Solc {
  if (solc) return solc
  const loaded = createRequire(import.meta.url)('solc') as Solc
  if (!loaded.version().startsWith(`${SOLC_VERSION}+`))
    throw new Error(`solc ${SOLC_VERSION} is required, found ${loaded.version()}: run npm ci`)
  solc = loaded
  return solc
}

/**
 * Compiles Solidity sources with the solc npm package and returns ABI and bytecode per contract. Any compiler error
 * throws with solc's own messages; warnings go to `onWarning`.
 */
export function compileSolidity(parameters: CompileSolidityParameters): CompileSolidityReturnType {
  const runs = parameters.optimizerRuns ?? 200
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(parameters.sources).map(([path, content]) => [path, { content }])),
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: runs > 0, runs: Math.max(runs, 1) },
      viaIR: false,
      metadata: { bytecodeHash: 'none' },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  }
  const output = JSON.parse(loadSolc().compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((entry) => entry.severity === 'error')
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((entry) => entry.formattedMessage).join('\n')}`)
  for (const entry of output.errors ?? []) if (entry.severity === 'warning') parameters.onWarning?.(entry.formattedMessage)
  const result: Record<string, CompiledContract> = {}
  for (const [path, contracts] of Object.entries(output.contracts ?? {}))
    for (const [name, contract] of Object.entries(contracts))
      result[`${path}:${name}`] = {
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      }
  return result
}
