// Balance-model pool stand-ins (test/chain/contracts/PoolStandIns.sol) placed at the pool addresses the live market
// reads (the catalogue's real Curve and PancakeSwap stable contracts), with the controls a test needs: the balances
// a pool answers, and a pool whose reads revert. The feed stand-ins' pattern (test/chain/feedStandIns.ts).
import type { Abi, Address } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

/** Controls over stand-in pools on one anvil node. Each change is one transaction, mined in a block of its own. */
export type PoolStandIns = {
  /** Puts a StandInPoolBalances's runtime code at `address` (anvil_setCode) answering `balances`, one per coin. */
  placePool(address: Address, balances: readonly bigint[]): Promise<void>
  /** The pool at `address` answers these balances from the next block on. */
  setBalances(address: Address, balances: readonly bigint[]): Promise<void>
  /** While failing, every `balances(i)` of the pool at `address` reverts ("StandInPoolBalances: failing"). */
  setFailing(address: Address, failing: boolean): Promise<void>
}

let artifact: CompiledContract | undefined

/** StandInPoolBalances's ABI and bytecode, from the test contracts' compilation (test/chain/testContracts.ts). */
export function standInPoolArtifact(): CompiledContract {
  if (artifact) return artifact
  const found = compiledTestContracts('standIns')['PoolStandIns.sol:StandInPoolBalances']
  if (!found) throw new Error('pool stand-ins: StandInPoolBalances is missing from the compiled test contracts')
  artifact = found
  return artifact
}

const abi = (): Abi => standInPoolArtifact().abi

/** Pool controls over an anvil node already running (for example the feed stand-ins' node). */
export function poolStandIns(anvil: AnvilInstance): PoolStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  const write = async (address: Address, functionName: string, args: readonly unknown[]): Promise<void> => {
    await writeContractAndWait(anvil, sender, { address, abi: abi(), functionName, args })
  }
  const setBalances = (address: Address, balances: readonly bigint[]): Promise<void> => write(address, 'setBalances', [balances])
  return {
    async placePool(address, balances) {
      await anvil.testClient.setCode({ address, bytecode: standInPoolArtifact().deployedBytecode })
      await setBalances(address, balances)
    },
    setBalances,
    setFailing: (address, failing) => write(address, 'setFailing', [failing]),
  }
}
