import { type Address, isAddress } from 'viem'
import { isEvmToken, numberToFixed, quotableRange, type Token } from '../engine/index.ts'
import { type ChainCode, ChainCodeInput } from '../schemas/catalogue.ts'
import { DEFAULT_SLIPPAGE, type QuoteParams } from '../schemas/quote.ts'
import type { ServiceDeps } from './deps.ts'
import { amountAboveMax, parseTokenAmount } from './parseTokenAmount.ts'
import { ServiceError } from './serviceError.ts'

export type ResolvedQuoteRequest = {
  from: Token
  to: Token
  amountIn: bigint
  slippageE18: bigint
  fromAddress: Address
  /** The recipient on the destination chain: toAddress, or fromAddress when none was given. */
  toAddress: Address
}

/**
 * The catalogue token a symbol names on a chain (case-insensitive); 422 `unsupported_token` listing the chain's tokens.
 * Callers check the chain is agent-callable first, so a token found there is on an EVM chain.
 */
export function resolveToken(deps: ServiceDeps, chain: QuoteParams['fromChain'], symbol: string, field: string): Token {
  const token = deps.catalogue.tokensByLowerKey.get(`${chain}:${symbol.toLowerCase()}`)
  if (token && isEvmToken(token)) return token
  const listed = deps.catalogue.chains.get(chain)?.tokens ?? []
  throw new ServiceError('unsupported_token', `${symbol} is not listed on ${chain}. Tokens on ${chain}: ${listed.join(', ')}.`, {
    field,
    chain,
    symbol,
    listed,
  })
}

/**
 * Turns schema-valid QuoteParams into engine inputs: canonical tokens (symbols match case-insensitively), the
 * amount in atomic units (excess precision rejected, never rounded; bounded by what a uint256 and the token can
 * hold, 400 and 422) and the slippage in 18-decimal fixed point.
 */
export function resolveQuoteRequest(deps: ServiceDeps, params: QuoteParams): ResolvedQuoteRequest {
  for (const [field, chain] of [
    ['fromChain', params.fromChain],
    ['toChain', params.toChain],
  ] as const)
    requireAgentCallable(deps, chain, field)
  checkChecksum('fromAddress', params.fromAddress)
  checkSender(deps, params.fromChain, 'fromAddress', params.fromAddress)
  if (params.toAddress !== undefined) {
    checkChecksum('toAddress', params.toAddress)
    checkRecipient(deps, params.toChain, 'toAddress', params.toAddress)
  } else {
    // The sender is paid: the same address must be able to receive on the destination chain.
    const refusal = recipientRefusal(deps, params.toChain, params.fromAddress, false)
    if (refusal !== undefined)
      throw invalid('fromAddress', `receives the output too, as toAddress is left out, but on ${params.toChain} it ${refusal} as toAddress`)
  }
  const from = resolveToken(deps, params.fromChain, params.fromToken, 'fromToken')
  const to = resolveToken(deps, params.toChain, params.toToken, 'toToken')
  if (from.key === to.key) throw invalid('toToken', 'is the same token on the same chain as fromToken; nothing to swap')
  const amount = parseTokenAmount(deps, params.fromAmount, from, 'fromAmount')
  if (!amount.ok && amount.reason === 'invalid') throw invalid(amount.error.field, amount.error.message)
  if (!amount.ok) {
    // The range a quote takes at the request's slippage (the default's where that is not valid either).
    const range = quotableRange(deps.catalogue, from, to, numberToFixed(params.slippage) ?? numberToFixed(DEFAULT_SLIPPAGE) ?? 0n)
    throw amountAboveMax({
      token: from,
      value: amount.value,
      maxIn: amount.maxIn,
      field: 'fromAmount',
      viable: range && { minIn: range.minIn, maxIn: range.maxIn < amount.maxIn ? range.maxIn : amount.maxIn },
    })
  }
  const slippageE18 = numberToFixed(params.slippage)
  if (slippageE18 === undefined) throw invalid('slippage', 'must be a plain fraction with at most 18 decimal places')
  return {
    from,
    to,
    amountIn: amount.value,
    slippageE18,
    fromAddress: params.fromAddress,
    toAddress: params.toAddress ?? params.fromAddress,
  }
}

/** DESIGN 7.1: SOL and TRX are listed for discovery only; 422 `not_agent_callable` points to the app. */
export function requireAgentCallable(deps: ServiceDeps, chain: QuoteParams['fromChain'], field: string): void {
  if (deps.catalogue.chains.get(chain)?.isAgentCallable !== true)
    throw new ServiceError(
      'not_agent_callable',
      `${chain} is listed for discovery but is not agent-callable: it needs a user-signed flow. Direct the user to ${deps.appUrl}.`,
      { field, chain, appUrl: deps.appUrl },
    )
}

/**
 * A request body from or to a discovery-only chain (SOL, TRX), refused before its schema is checked: its addresses
 * are that chain's (base58), and a 400 saying they must be 0x addresses sent agents to invent an EVM wallet instead of
 * the app (audit of issue 15). What is not an object, or names no such chain, is left to the schema.
 */
export function refuseDiscoveryChains(deps: ServiceDeps, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return
  for (const field of ['fromChain', 'toChain'] as const) {
    const chain = ChainCodeInput.safeParse((value as Record<string, unknown>)[field])
    if (chain.success) requireAgentCallable(deps, chain.data, field)
  }
}

export const BAD_CHECKSUM =
  'fails its EIP-55 checksum: the address is probably mistyped; copy it again from its source (the wallet or the recipient), exactly as shown there'

/** All-lowercase or all-uppercase hex carries no checksum; mixed case is an EIP-55 checksum and must match. */
export function hasValidChecksum(address: string): boolean {
  const hex = address.slice(2)
  return hex === hex.toLowerCase() || hex === hex.toUpperCase() || isAddress(address, { strict: true })
}

export function checkChecksum(field: string, address: string): void {
  if (!hasValidChecksum(address)) throw invalid(field, BAD_CHECKSUM)
}

/** The zero address: no key signs for it, and the router refuses it as a recipient ("order has no recipient"). */
const ZERO_ADDRESS = `0x${'0'.repeat(40)}`

const SIGNER = 'send the address of the wallet that signs and pays'

/**
 * 400 when the sender cannot sign on `chain`: the zero address, which nothing can sign for, or a contract the
 * catalogue knows there (a token, our router or executor), which signs no transaction.
 */
export function checkSender(deps: ServiceDeps, chain: ChainCode, field: string, address: string): void {
  if (address.toLowerCase() === ZERO_ADDRESS) throw invalid(field, `is the zero address, which no wallet can sign for; ${SIGNER}`)
  const contract = knownContract(deps, chain, address)
  if (contract !== undefined) throw invalid(field, `is ${contract}, not a wallet: it signs no transaction; ${SIGNER}`)
}

/** The contract of ours or of the catalogue that `address` is on `chain`, in words; undefined for any other address. */
function knownContract(deps: ServiceDeps, chain: ChainCode, address: string): string | undefined {
  const lower = address.toLowerCase()
  for (const token of deps.catalogue.tokens.values())
    if (token.chain === chain && token.address.toLowerCase() === lower) return `the ${token.symbol} token contract on ${chain}`
  const deployment = deps.routerOn(chain)
  if (deployment.router.toLowerCase() === lower) return `SwapEazi's router on ${chain}`
  if (deployment.executor.toLowerCase() === lower) return `SwapEazi's executor on ${chain}`
  return undefined
}

/**
 * Why `address` cannot receive on `chain`, or undefined when it can: the zero address (the router reverts: "order
 * has no recipient"), a token contract of the catalogue there, or our router or its executor there (tokens sent to
 * a contract that is not a wallet are stuck or lost).
 */
export function recipientRefusal(
  deps: ServiceDeps,
  chain: ChainCode,
  address: string,
  /** What else the field allows: a quote's toAddress may be left out (the sender is paid); a batch's address may not. */
  isOptional = true,
): string | undefined {
  const toWallet = `; send the recipient's own wallet address${isOptional ? ', or omit it to pay the sender' : ''}`
  if (address.toLowerCase() === ZERO_ADDRESS)
    return `is the zero address: the router refuses it and the transaction would revert${toWallet}`
  const contract = knownContract(deps, chain, address)
  if (contract === undefined) return undefined
  const fate = contract.includes('token contract') ? 'lost' : 'stuck'
  return `is ${contract}, not a wallet: tokens sent there are ${fate}${toWallet}`
}

/** 400 naming `field` when `address` cannot receive on `chain` (recipientRefusal). */
export function checkRecipient(deps: ServiceDeps, chain: ChainCode, field: string, address: string): void {
  const refusal = recipientRefusal(deps, chain, address)
  if (refusal !== undefined) throw invalid(field, refusal)
}

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('invalid_request', `${field} ${message}.`, { errors: [{ field, message }] })
}
