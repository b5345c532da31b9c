// Types of scripts/compiledCli.js (plain JavaScript: it runs before anything is compiled).

export type CompiledCliOptions = {
  /** The package root (default: this package). */
  root?: string
  /** Where builds go (default: dist/ under the root). */
  outDir?: string
}

/** The path of the compiled CLI for the sources as they are now, built first when it does not exist yet. */
export function compiledCli(options?: CompiledCliOptions): Promise<string>

/** A hash of everything the build is made from: a changed input names another build. */
export function inputsHash(root: string): string

/** The entry beside a compiled CLI that `serve` imports before it (src/cli/openStoreEarly.ts). */
export function earlyOf(target: string): string
