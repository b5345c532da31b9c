import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { DEFAULT_ROUTER_ADDRESS, INERT_OWNER, predictRouterAddress } from '../../src/contracts/deployRouter.ts'
import { swapEaziExecutorDeployedBytecode, swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { routerTargets } from '../../src/tx/routerTargets.ts'
import { type AnvilInstance, startAnvil } from '../chain/anvil.ts'
import { type CliRun, runCliInProcess } from '../support/runCliInProcess.ts'

// anvil's first and second dev keys (public test keys, never funded anywhere real).
const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'

let anvil: AnvilInstance
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
})
afterAll(async () => anvil?.stop())

/** `swapeazi ARGS` in-process, with only the log level and `env` set. */
const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
  runCliInProcess(args, { SWAPEAZI_LOG_LEVEL: 'silent', ...env })

describe('swapeazi router deploy / allow', () => {
  it('deploys through the CREATE2 proxy at the predicted address, with the executor the builder expects', async () => {
    const owner = anvil.accounts[0]!.address
    const treasury = anvil.accounts[9]!.address
    const result = await cli(['router', 'deploy', '--rpc-url', anvil.rpcUrl, '--owner', owner, '--treasury', treasury], {
      SWAPEAZI_DEPLOYER_PRIVATE_KEY: DEPLOYER_KEY,
    })
    expect(result.code, result.stderr).toBe(0)
    const printed = JSON.parse(result.stdout) as { router: Address; alreadyDeployed: boolean }
    expect(printed.router).toBe(predictRouterAddress({ owner, treasury }))
    expect(printed.alreadyDeployed).toBe(false)
    const { executor } = routerDeployment(printed.router)
    // The executor's runtime code is the artifact's with its immutable `router` filled in (solc leaves zeros there).
    const immutableSlot = `7f${'0'.repeat(24)}${'0'.repeat(40)}`
    const expected = swapEaziExecutorDeployedBytecode.replaceAll(
      immutableSlot,
      `7f${'0'.repeat(24)}${printed.router.slice(2).toLowerCase()}`,
    )
    expect(expected).not.toBe(swapEaziExecutorDeployedBytecode)
    expect((await anvil.publicClient.getCode({ address: executor })) === expected, 'executor runtime code differs from the artifact').toBe(
      true,
    )
    expect(await anvil.publicClient.readContract({ address: printed.router, abi: swapEaziRouterAbi, functionName: 'executor' })).toBe(
      executor,
    )
    expect(await anvil.publicClient.readContract({ address: printed.router, abi: swapEaziRouterAbi, functionName: 'treasury' })).toBe(
      treasury,
    )

    // The same arguments again: nothing is sent, the address is the same.
    const again = await cli(['router', 'deploy', '--rpc-url', anvil.rpcUrl, '--owner', owner, '--treasury', treasury], {
      SWAPEAZI_DEPLOYER_PRIVATE_KEY: DEPLOYER_KEY,
    })
    expect(JSON.parse(again.stdout)).toMatchObject({ router: printed.router, alreadyDeployed: true })

    // allow: every venue, bridge and delivery contract of the catalogue on ETH ends up allowed, signed by the owner.
    const allowed = await cli(['router', 'allow', '--rpc-url', anvil.rpcUrl, '--router', printed.router, '--chain', 'ETH'], {
      SWAPEAZI_DEPLOYER_PRIVATE_KEY: DEPLOYER_KEY,
    })
    expect(allowed.code, allowed.stderr).toBe(0)
    const targets = routerTargets(loadCatalogue(fileURLToPath(new URL('../../manifest', import.meta.url))).catalogue, 'ETH')
    expect(allowed.stdout.trim().split('\n')).toHaveLength(targets.length)
    for (const target of targets)
      expect(
        await anvil.publicClient.readContract({
          address: printed.router,
          abi: swapEaziRouterAbi,
          functionName: 'isAllowedTarget',
          args: [target.address],
        }),
      ).toBe(true)
  }, 60_000)

  it('refuses the inert default owner, a missing key and a malformed flag, with a message that says what to do', async () => {
    const inert = await cli(['router', 'deploy', '--rpc-url', anvil.rpcUrl, '--owner', INERT_OWNER, '--treasury', INERT_OWNER], {
      SWAPEAZI_DEPLOYER_PRIVATE_KEY: DEPLOYER_KEY,
    })
    expect(inert.code).toBe(1)
    expect(inert.stderr).toMatch(/addresses you control/)
    const keyless = await cli([
      'router',
      'deploy',
      '--rpc-url',
      anvil.rpcUrl,
      '--owner',
      anvil.accounts[0]!.address,
      '--treasury',
      anvil.accounts[0]!.address,
    ])
    expect(keyless.stderr).toMatch(/set SWAPEAZI_DEPLOYER_PRIVATE_KEY/)
    const bad = await cli(['router', 'deploy', '--rpc-url', anvil.rpcUrl, '--owner', '0x12', '--treasury', anvil.accounts[0]!.address], {
      SWAPEAZI_DEPLOYER_PRIVATE_KEY: DEPLOYER_KEY,
    })
    expect(bad.stderr).toMatch(/--owner must be an address/)
  }, 60_000)

  it('documents the default router: the CREATE2 address of the inert router, as docs/configuration.md states', () => {
    expect(DEFAULT_ROUTER_ADDRESS).toBe(predictRouterAddress({ owner: INERT_OWNER, treasury: INERT_OWNER }))
    // The configuration reference (README's until it moved to docs/) states the default; it moves whenever the
    // contract changes, and this keeps the two in step. The formatter pads table cells, so any spacing will do.
    const reference = readFileSync(fileURLToPath(new URL('../../docs/configuration.md', import.meta.url)), 'utf8')
    expect(reference).toMatch(new RegExp(`^\\| \`SWAPEAZI_ROUTER_ADDRESS\` +\\| \`${DEFAULT_ROUTER_ADDRESS}\` +\\|`, 'm'))
  })
})
