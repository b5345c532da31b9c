import { erc20Abi, parseAbi, prepareEncodeFunctionData } from 'viem'
import { swapEaziExecutorAbi, swapEaziRouterAbi } from '../contracts/routerArtifact.ts'

/**
 * The public ABIs our routes call, as each protocol publishes them. viem encodes every call against these; nothing
 * is encoded by hand.
 */

/** Uniswap v3 SwapRouter02 (IV3SwapRouter: no deadline) and PancakeSwap v3 SmartRouter, which shares the shape. */
export const v3SwapRouterAbi = parseAbi([
  'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
  'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
])

/** Curve plain pools (3pool) and stableswap-ng: coin indices are int128. */
export const curvePoolAbi = parseAbi(['function exchange(int128 i, int128 j, uint256 dx, uint256 min_dy) returns (uint256)'])

/** PancakeSwap StableSwap two-pool: coin indices are uint256 and nothing is returned. */
export const pancakeStableSwapAbi = parseAbi(['function exchange(uint256 i, uint256 j, uint256 dx, uint256 min_dy) payable'])

/** Solidly-style routers: Aerodrome (Base) and Velodrome v2 (Optimism). */
export const solidlyRouterAbi = parseAbi([
  'struct Route { address from; address to; bool stable; address factory; }',
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, Route[] routes, address to, uint256 deadline) returns (uint256[] amounts)',
])

/**
 * Balancer v2 Vault `batchSwap` (balancer-v2-monorepo pkg/interfaces IVault.sol; selector 0x945bcec9): several pools in
 * one call, each step spending the previous step's output when its amount is 0.
 */
export const balancerVaultAbi = parseAbi([
  'struct BatchSwapStep { bytes32 poolId; uint256 assetInIndex; uint256 assetOutIndex; uint256 amount; bytes userData; }',
  'struct FundManagement { address sender; bool fromInternalBalance; address recipient; bool toInternalBalance; }',
  'function batchSwap(uint8 kind, BatchSwapStep[] swaps, address[] assets, FundManagement funds, int256[] limits, uint256 deadline) payable returns (int256[] assetDeltas)',
])

/** Mento Broker (Celo). */
export const mentoBrokerAbi = parseAbi([
  'function swapIn(address exchangeProvider, bytes32 exchangeId, address tokenIn, address tokenOut, uint256 amountIn, uint256 amountOutMin) returns (uint256 amountOut)',
])

/** Circle CCTP v2 TokenMessengerV2. */
export const cctpTokenMessengerV2Abi = parseAbi([
  'function depositForBurn(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold)',
  'function depositForBurnWithHook(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold, bytes hookData)',
])

/** Across SpokePool (bytes32 addressing, across-protocol/contracts SpokePool.sol). */
export const acrossSpokePoolAbi = parseAbi([
  'function deposit(bytes32 depositor, bytes32 recipient, bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, bytes32 exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message) payable',
])

/** LayerZero v2 OFT `send`: Stargate v2 pools and the USDT0 OFT and legacy mesh share it. */
export const oftAbi = parseAbi([
  'struct SendParam { uint32 dstEid; bytes32 to; uint256 amountLD; uint256 minAmountLD; bytes extraOptions; bytes composeMsg; bytes oftCmd; }',
  'struct MessagingFee { uint256 nativeFee; uint256 lzTokenFee; }',
  'struct MessagingReceipt { bytes32 guid; uint64 nonce; MessagingFee fee; }',
  'struct OFTReceipt { uint256 amountSentLD; uint256 amountReceivedLD; }',
  'function send(SendParam _sendParam, MessagingFee _fee, address _refundAddress) payable returns (MessagingReceipt msgReceipt, OFTReceipt oftReceipt)',
])

/**
 * Every function a built transaction calls, prepared once with viem's `prepareEncodeFunctionData`: its ABI item found
 * and its selector hashed (keccak256 of the signature) when this module loads, instead of on every call.
 * `encodeFunctionData({ ...prepared, args })` encodes exactly what `encodeFunctionData({ abi, functionName, args })`
 * does; a swap encodes a dozen calls, and these lookups were a tenth of its encoding time.
 */
export const exactInputSingleCall = prepareEncodeFunctionData({ abi: v3SwapRouterAbi, functionName: 'exactInputSingle' })
export const curveExchangeCall = prepareEncodeFunctionData({ abi: curvePoolAbi, functionName: 'exchange' })
export const pancakeStableExchangeCall = prepareEncodeFunctionData({ abi: pancakeStableSwapAbi, functionName: 'exchange' })
export const swapExactTokensForTokensCall = prepareEncodeFunctionData({ abi: solidlyRouterAbi, functionName: 'swapExactTokensForTokens' })
export const batchSwapCall = prepareEncodeFunctionData({ abi: balancerVaultAbi, functionName: 'batchSwap' })
export const mentoSwapInCall = prepareEncodeFunctionData({ abi: mentoBrokerAbi, functionName: 'swapIn' })
export const depositForBurnCall = prepareEncodeFunctionData({ abi: cctpTokenMessengerV2Abi, functionName: 'depositForBurn' })
export const depositForBurnWithHookCall = prepareEncodeFunctionData({
  abi: cctpTokenMessengerV2Abi,
  functionName: 'depositForBurnWithHook',
})
export const acrossDepositCall = prepareEncodeFunctionData({ abi: acrossSpokePoolAbi, functionName: 'deposit' })
export const oftSendCall = prepareEncodeFunctionData({ abi: oftAbi, functionName: 'send' })
export const approveCall = prepareEncodeFunctionData({ abi: erc20Abi, functionName: 'approve' })
export const routerExecuteCall = prepareEncodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'execute' })
export const routerExecuteBatchCall = prepareEncodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'executeBatch' })
/** The executor's `runDestination` parameters: a destination order is carried as their encoding, without a selector. */
export const runDestinationInputs = prepareEncodeFunctionData({ abi: swapEaziExecutorAbi, functionName: 'runDestination' }).abi[0].inputs
