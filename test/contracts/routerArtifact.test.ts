import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { compileRouter, type RouterArtifact, renderRouterArtifact } from '../../src/contracts/compileRouter.ts'

const ARTIFACT = fileURLToPath(new URL('../../src/contracts/routerArtifact.ts', import.meta.url))

let compiled: RouterArtifact | undefined
/** contracts/*.sol compiled afresh, once for this file: never a cached build, which is the point of the file. */
const freshlyCompiled = (): RouterArtifact => (compiled ??= compileRouter())

describe('the committed router artifact', () => {
  it('is exactly what solc builds from contracts/*.sol today (run `npm run contracts` after changing a contract)', () => {
    const committed = readFileSync(ARTIFACT, 'utf8')
    const rebuilt = renderRouterArtifact(freshlyCompiled())
    expect(rebuilt === committed, 'src/contracts/routerArtifact.ts is stale: run npm run contracts').toBe(true)
  }, 60_000)

  it('exposes the entry points the builder and the operators use', () => {
    const artifact = freshlyCompiled()
    const names = (abi: readonly { type: string; name?: string }[]) =>
      abi
        .filter((item) => item.type === 'function')
        .map((item) => item.name)
        .sort()
    expect(names(artifact.router.abi as never)).toEqual(
      [
        'execute',
        'executeBatch',
        'executeWithPermit',
        'executor',
        'isAllowedTarget',
        'owner',
        'setTarget',
        'setTreasury',
        'transferOwnership',
        'treasury',
      ].sort(),
    )
    expect(names(artifact.executor.abi as never)).toEqual(
      ['handleV3AcrossMessage', 'isAllowedTarget', 'lzCompose', 'relayCctp', 'router', 'run', 'runDestination', 'setTarget'].sort(),
    )
  }, 60_000)
})
