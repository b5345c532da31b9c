// LayerZero OFT fee-quote stand-ins (test/chain/contracts/OftQuoteStandIn.sol) placed at the OFT addresses the live
// market quotes (manifest/bridges.json), answering `quoteSend` with the fee a test sets. The feed stand-ins' pattern
// (test/chain/feedStandIns.ts).
import type { Abi, Address } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

/** Controls over OFT stand-ins on one anvil node. Each change is one transaction, mined in a block of its own. */
export type OftQuoteStandIns = {
  /** Puts a StandInOftQuote at `address` (anvil_setCode) asking `defaultFeeWei` to every destination. */
  placeOft(address: Address, defaultFeeWei: bigint): Promise<void>
  /** The OFT at `address` asks `feeWei` for a taxi to `dstEid` (a tenth of it for the bus). */
  setFee(address: Address, dstEid: number, feeWei: bigint): Promise<void>
  /** While failing, every quote of the OFT at `address` reverts ("StandInOftQuote: failing"). */
  setFailing(address: Address, failing: boolean): Promise<void>
  /** A quote with a compose message asks `feePerByteWei` more per byte of it (default 0). */
  setComposeFeePerByte(address: Address, feePerByteWei: bigint): Promise<void>
}

let artifact: CompiledContract | undefined

export function oftQuoteArtifact(): CompiledContract {
  if (artifact) return artifact
  const found = compiledTestContracts('standIns')['OftQuoteStandIn.sol:StandInOftQuote']
  if (!found) throw new Error('OFT stand-ins: StandInOftQuote is missing from the compiled test contracts')
  artifact = found
  return artifact
}

/** OFT controls over an anvil node already running (for example the feed stand-ins' node). */
export function oftQuoteStandIns(anvil: AnvilInstance): OftQuoteStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  const write = async (address: Address, functionName: string, args: readonly unknown[]): Promise<void> => {
    await writeContractAndWait(anvil, sender, { address, abi: oftQuoteArtifact().abi as Abi, functionName, args })
  }
  return {
    async placeOft(address, defaultFeeWei) {
      await anvil.testClient.setCode({ address, bytecode: oftQuoteArtifact().deployedBytecode })
      await write(address, 'setDefaultFee', [defaultFeeWei])
    },
    setFee: (address, dstEid, feeWei) => write(address, 'setFee', [dstEid, feeWei]),
    setFailing: (address, failing) => write(address, 'setFailing', [failing]),
    setComposeFeePerByte: (address, feePerByteWei) => write(address, 'setComposeFeePerByte', [feePerByteWei]),
  }
}
