import { type Address, encodeFunctionData, encodePacked, type Hex, pad, zeroHash } from 'viem'
import { type BridgeLane, ceilDiv, pow10 } from '../engine/index.ts'
import { acrossDepositCall, depositForBurnCall, depositForBurnWithHookCall, oftSendCall } from './abis.ts'
import { encodeWithAmountSlot } from './amountSlot.ts'
import type { RouterCall } from './call.ts'

/** CCTP v2 finality thresholds: at most 1000 is Fast, 2000 is Standard (circlefin/evm-cctp-contracts). */
const CCTP_FAST_THRESHOLD = 1000
const CCTP_STANDARD_THRESHOLD = 2000

export type EncodeBridgeCallParameters = {
  lane: BridgeLane
  /** Estimated deposit; the executor replaces it on chain with its actual balance of the bridged token. */
  amountIn: bigint
  /** Across: the exact amount the relayer delivers, in the destination token's units. */
  outputAmount: bigint
  /** LayerZero: the least the bridge may deliver, in the destination token's units. */
  outputMin: bigint
  /** CCTP: the most Circle may keep of the burn, in the source token's units. */
  maxFee: bigint
  /** Who receives on the destination chain: the user, or our executor there when a destination order follows. */
  recipient: Address
  /** The ABI-encoded DestinationOrder for our executor on the destination chain, when the route continues there. */
  message?: Hex
  /** The signer: Across depositor (refunds of unfilled deposits) and LayerZero refund address. */
  refundTo: Address
  destinationChainId: number
  /** Across: the quote time and the fill deadline, unix seconds. */
  quoteTimestampSec: number
  fillDeadlineSec: number
  /** LayerZero: the native messaging fee in wei, sent as the call's value. */
  nativeFeeWei: bigint
  /** LayerZero: gas the executor on the destination needs for lzCompose. */
  composeGas: bigint
}

/** LayerZero executor options, type 3, with one lzCompose option for compose index 0 (LayerZero OptionsBuilder). */
export function lzComposeOptions(gas: bigint): Hex {
  const workerExecutor = 1
  const optionTypeCompose = 3
  // option = type (1) + index (2) + gas (16) bytes
  return encodePacked(['uint16', 'uint8', 'uint16', 'uint8', 'uint16', 'uint128'], [3, workerExecutor, 19, optionTypeCompose, 0, gas])
}

const toBytes32 = (address: Address): Hex => pad(address, { size: 32 })

/** Converts an amount between decimals, rounding up: used for minimums we must not undercut. */
function rescaleUp(amount: bigint, fromDecimals: number, toDecimals: number): bigint {
  if (toDecimals >= fromDecimals) return amount * pow10(toDecimals - fromDecimals)
  return ceilDiv(amount, pow10(fromDecimals - toDecimals))
}

/** Encodes a bridge deposit as a router call against the bridge's public ABI. */
export function encodeBridgeCall(parameters: EncodeBridgeCallParameters): RouterCall {
  const { lane, amountIn, recipient, message } = parameters
  const { bridge } = lane
  const contract = lane.sourceContract
  const burnToken = lane.from.address
  let encode: (amount: bigint) => Hex
  let value = 0n
  switch (bridge.protocol) {
    case 'cctp-v2': {
      if (lane.destinationDomain === undefined) throw new Error(`bridge ${bridge.id} has no CCTP domain for ${lane.to.chain}`)
      const domain = lane.destinationDomain
      const threshold = bridge.mode === 'standard' ? CCTP_STANDARD_THRESHOLD : CCTP_FAST_THRESHOLD
      const mintRecipient = toBytes32(recipient)
      if (message) {
        // destinationCaller = our executor: only it may receive the message, so the mint and the order run together.
        encode = (amount) =>
          encodeFunctionData({
            ...depositForBurnWithHookCall,
            args: [amount, domain, mintRecipient, burnToken, mintRecipient, parameters.maxFee, threshold, message],
          })
      } else {
        encode = (amount) =>
          encodeFunctionData({
            ...depositForBurnCall,
            args: [amount, domain, mintRecipient, burnToken, zeroHash, parameters.maxFee, threshold],
          })
      }
      break
    }
    case 'across':
      encode = (amount) =>
        encodeFunctionData({
          ...acrossDepositCall,
          args: [
            toBytes32(parameters.refundTo),
            toBytes32(recipient),
            toBytes32(burnToken),
            toBytes32(lane.to.address),
            amount,
            parameters.outputAmount,
            BigInt(parameters.destinationChainId),
            zeroHash,
            parameters.quoteTimestampSec,
            parameters.fillDeadlineSec,
            0,
            message ?? '0x',
          ],
        })
      break
    case 'stargate-v2':
    case 'usdt0-oft': {
      if (lane.destinationDomain === undefined) throw new Error(`bridge ${bridge.id} has no LayerZero endpoint id for ${lane.to.chain}`)
      const isBus = bridge.mode === 'bus'
      if (isBus && message) throw new Error(`${bridge.name} cannot carry a compose message`)
      // Our executor only accepts a compose from an allow-listed OFT: without its address there, the tokens would
      // arrive and the order never run.
      if (message && lane.destinationContract === undefined)
        throw new Error(`${bridge.name} has no known contract on ${lane.to.chain} to accept a compose from (manifest/bridges.json)`)
      const dstEid = lane.destinationDomain
      const minAmountLD = rescaleUp(parameters.outputMin, lane.to.decimals, lane.from.decimals)
      const fee = { nativeFee: parameters.nativeFeeWei, lzTokenFee: 0n }
      value = parameters.nativeFeeWei
      encode = (amount) =>
        encodeFunctionData({
          ...oftSendCall,
          args: [
            {
              dstEid,
              to: toBytes32(recipient),
              amountLD: amount,
              minAmountLD,
              extraOptions: message ? lzComposeOptions(parameters.composeGas) : '0x',
              composeMsg: message ?? '0x',
              // Stargate: an empty command rides the taxi, a single zero byte boards the bus.
              oftCmd: isBus ? '0x00' : '0x',
            },
            fee,
            parameters.refundTo,
          ],
        })
      break
    }
    default:
      throw new Error(`no transaction encoding for bridge protocol ${bridge.protocol} (${bridge.id})`)
  }
  const { data, amountOffset } = encodeWithAmountSlot(encode, amountIn)
  return { target: contract, token: burnToken, amountOffset, value, data }
}
