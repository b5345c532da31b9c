// Solidly router stand-ins (test/chain/contracts/SolidlyReservesStandIn.sol) placed at the router addresses the live
// market reads (the catalogue's Aerodrome and Velodrome v2 routers, manifest/venues.json), answering getReserves with
// the reserves a test sets per pool, and a router whose reads revert. The pool stand-ins' pattern
// (test/chain/poolStandIns.ts).
import type { Abi, Address } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import type { PoolSpec } from '../../src/market/chainReading.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

/** A Solidly pool as the live market's plan names it: read through `address`, its router. */
export type SolidlyPool = Required<Pick<PoolSpec, 'address' | 'solidly'>>

/** Controls over Solidly router stand-ins on one anvil node. Each change is one transaction, mined in a block of its own. */
export type SolidlyStandIns = {
  /** Puts a StandInSolidlyReserves at the pool's router (unless one is there) answering `reserves`, in the pool's token order. */
  placePool(pool: SolidlyPool, reserves: readonly bigint[]): Promise<void>
  /** The pool answers these reserves from the next block on, given in the order of `tokens` (default the pool's). */
  setReserves(pool: SolidlyPool, reserves: readonly bigint[], tokens?: readonly [Address, Address]): Promise<void>
  /** While failing, every getReserves of the router at `address` reverts ("StandInSolidlyReserves: failing"). */
  setFailing(address: Address, failing: boolean): Promise<void>
}

let artifact: CompiledContract | undefined

export function solidlyReservesArtifact(): CompiledContract {
  if (artifact) return artifact
  const found = compiledTestContracts('standIns')['SolidlyReservesStandIn.sol:StandInSolidlyReserves']
  if (!found) throw new Error('Solidly stand-ins: StandInSolidlyReserves is missing from the compiled test contracts')
  artifact = found
  return artifact
}

/** Solidly router controls over an anvil node already running (for example the feed stand-ins' node). */
export function solidlyStandIns(anvil: AnvilInstance): SolidlyStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  const write = async (address: Address, functionName: string, args: readonly unknown[]): Promise<void> => {
    await writeContractAndWait(anvil, sender, { address, abi: solidlyReservesArtifact().abi as Abi, functionName, args })
  }
  const setReserves = async (pool: SolidlyPool, reserves: readonly bigint[], tokens = pool.solidly.tokens): Promise<void> => {
    const [reserveA, reserveB] = reserves
    if (reserveA === undefined || reserveB === undefined) throw new Error('Solidly stand-ins: two reserves per pool')
    await write(pool.address, 'setReserves', [tokens[0], tokens[1], pool.solidly.stable, pool.solidly.factory, reserveA, reserveB])
  }
  return {
    async placePool(pool, reserves) {
      const code = await anvil.publicClient.getCode({ address: pool.address })
      if (code !== solidlyReservesArtifact().deployedBytecode)
        await anvil.testClient.setCode({ address: pool.address, bytecode: solidlyReservesArtifact().deployedBytecode })
      await setReserves(pool, reserves)
    },
    setReserves,
    setFailing: (address, failing) => write(address, 'setFailing', [failing]),
  }
}
