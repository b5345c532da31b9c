// Token-price stand-ins: an ERC-4626 vault (test/chain/contracts/TokenRatioStandIns.sol) placed at sUSDe's address,
// and the EMA `price_oracle` of the Curve pool stand-in (test/chain/contracts/PoolStandIns.sol) already at a pool's
// address (src/market/feedCatalogue.ts TOKEN_RATIO_READS). The feed stand-ins' pattern (test/chain/feedStandIns.ts).
import type { Abi, Address } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { standInPoolArtifact } from './poolStandIns.ts'
import { compiledTestContracts } from './testContracts.ts'

/** Controls over token-price stand-ins on one anvil node. Each change is one transaction, mined in a block of its own. */
export type TokenRatioStandIns = {
  /** Puts a StandInErc4626Rate at `address` (anvil_setCode) answering `assetsPerShareE18` assets per whole share. */
  placeVault(address: Address, assetsPerShareE18: bigint): Promise<void>
  setAssetsPerShare(address: Address, assetsPerShareE18: bigint): Promise<void>
  /** While failing, `convertToAssets` of the vault at `address` reverts ("StandInErc4626Rate: failing"). */
  setVaultFailing(address: Address, failing: boolean): Promise<void>
  /** The pool stand-in at `address` answers `price_oracle(i)` with this (18 decimals); default 10^18. */
  setPriceOracle(address: Address, priceE18: bigint): Promise<void>
  setPriceOracleFailing(address: Address, failing: boolean): Promise<void>
}

export function erc4626RateArtifact(): CompiledContract {
  const found = compiledTestContracts('standIns')['TokenRatioStandIns.sol:StandInErc4626Rate']
  if (!found) throw new Error('token ratio stand-ins: StandInErc4626Rate is missing from the compiled test contracts')
  return found
}

export function tokenRatioStandIns(anvil: AnvilInstance): TokenRatioStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  const write = async (address: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void> => {
    await writeContractAndWait(anvil, sender, { address, abi, functionName, args })
  }
  const vault = (): Abi => erc4626RateArtifact().abi as Abi
  const pool = (): Abi => standInPoolArtifact().abi as Abi
  return {
    async placeVault(address, assetsPerShareE18) {
      await anvil.testClient.setCode({ address, bytecode: erc4626RateArtifact().deployedBytecode })
      await write(address, vault(), 'setAssetsPerShare', [assetsPerShareE18])
    },
    setAssetsPerShare: (address, assetsPerShareE18) => write(address, vault(), 'setAssetsPerShare', [assetsPerShareE18]),
    setVaultFailing: (address, failing) => write(address, vault(), 'setFailing', [failing]),
    setPriceOracle: (address, priceE18) => write(address, pool(), 'setPriceOracle', [priceE18]),
    setPriceOracleFailing: (address, failing) => write(address, pool(), 'setPriceOracleFailing', [failing]),
  }
}
