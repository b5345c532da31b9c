// L1 data-fee stand-ins (test/chain/contracts/L1FeeStandIns.sol) placed where the live market reads a rollup's L1
// data fee: the OP-stack GasPriceOracle predeploy and Arbitrum's ArbGasInfo precompile (src/market/feedCatalogue.ts
// L1_FEE_ORACLES). The feed stand-ins' pattern (test/chain/feedStandIns.ts).
import type { Abi } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import type { L1FeeSpec } from '../../src/market/chainReading.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

/** Controls over an L1 data-fee stand-in on one anvil node. Each change is one transaction, mined in a block of its own. */
export type L1FeeStandIns = {
  /**
   * Puts the stand-in the spec reads at its address (anvil_setCode), asking `fixedFeeWei` plus `feePerByteWei` per
   * byte of the transaction (ArbGasInfo: its per-transaction and per-calldata-byte prices).
   */
  place(spec: L1FeeSpec, fixedFeeWei: bigint, feePerByteWei: bigint): Promise<void>
  setL1Fee(spec: L1FeeSpec, fixedFeeWei: bigint, feePerByteWei: bigint): Promise<void>
  /** ArbGasInfo's `getMinimumGasPrice()`, in wei (placed at 0.01 gwei, Arbitrum One's floor before ArbOS 51). */
  setMinimumGasPrice(spec: L1FeeSpec, wei: bigint): Promise<void>
  /** While failing, every read reverts ("StandInGasPriceOracle: failing", "StandInArbGasInfo: failing"). */
  setFailing(spec: L1FeeSpec, failing: boolean): Promise<void>
}

/** The stand-in contract of each kind of L1 fee read. */
export function l1FeeArtifact(kind: L1FeeSpec['kind']): CompiledContract {
  const name = kind === 'arbGasInfo' ? 'L1FeeStandIns.sol:StandInArbGasInfo' : 'L1FeeStandIns.sol:StandInGasPriceOracle'
  const found = compiledTestContracts('standIns')[name]
  if (!found) throw new Error(`L1 fee stand-ins: ${name} is missing from the compiled test contracts`)
  return found
}

export function l1FeeStandIns(anvil: AnvilInstance): L1FeeStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  const write = async (spec: L1FeeSpec, functionName: string, args: readonly unknown[]): Promise<void> => {
    await writeContractAndWait(anvil, sender, { address: spec.address, abi: l1FeeArtifact(spec.kind).abi as Abi, functionName, args })
  }
  const setL1Fee = (spec: L1FeeSpec, fixedFeeWei: bigint, feePerByteWei: bigint): Promise<void> =>
    write(spec, 'setL1Fee', [fixedFeeWei, feePerByteWei])
  return {
    async place(spec, fixedFeeWei, feePerByteWei) {
      await anvil.testClient.setCode({ address: spec.address, bytecode: l1FeeArtifact(spec.kind).deployedBytecode })
      await setL1Fee(spec, fixedFeeWei, feePerByteWei)
      if (spec.kind === 'arbGasInfo') await write(spec, 'setMinimumGasPrice', [10_000_000n])
    },
    setL1Fee,
    setMinimumGasPrice: (spec, wei) => write(spec, 'setMinimumGasPrice', [wei]),
    setFailing: (spec, failing) => write(spec, 'setFailing', [failing]),
  }
}
