import { type Address, decodeFunctionData, formatEther, getAddress, type Hex, hexToBigInt, isAddressEqual, sliceHex, zeroHash } from 'viem'
import { DEFAULT_ROUTER_ADDRESS, INERT_OWNER } from '../contracts/deployRouter.ts'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import type { CandidateRoute, Catalogue } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { acrossSpokePoolAbi, cctpTokenMessengerV2Abi, oftAbi } from '../tx/abis.ts'
import type { BuildRouteTransactionReturnType } from '../tx/buildRouteTransaction.ts'
import { routerDeployment } from '../tx/routerDeployment.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/** The inert default router and its executor, deployed nowhere (docs/router-contract.md). */
const INERT = routerDeployment(DEFAULT_ROUTER_ADDRESS)

/**
 * A contract of ours a built transaction depends on: the router the user's transaction calls on the source chain, or
 * the executor a bridge delivers to on the destination chain, where a swap on arrival runs.
 */
export type RouterUse = {
  chain: ChainCode
  address: Address
  role: 'router' | 'executor'
  /** The native value (wei) the transaction sends the router with it: a LayerZero messaging fee, lost at a codeless address. */
  valueWei?: bigint
}

/** The agent-callable chains whose router is the inert default: no router of the operator's own there. */
export function inertChainsOf(catalogue: Catalogue, routerOn: (chain: ChainCode) => { router: Address }): ChainCode[] {
  return [...catalogue.chains.values()]
    .filter((chain) => chain.isAgentCallable && isAddressEqual(routerOn(chain.id).router, INERT.router))
    .map((chain) => chain.id)
}

/** Where a deployment's routers are: the operator's own, or the inert default. */
type RouterOn = (chain: ChainCode) => { router: Address }

type InertRouting = {
  chains: ReadonlySet<ChainCode>
  /** The agent-callable chains with a router of the operator's own, in the catalogue's order. */
  routed: readonly ChainCode[]
  /** What routing prefers, where there is something to prefer (preferredRoutes). */
  prefer: ((route: CandidateRoute) => boolean) | undefined
}

/** Per deployment (its routerOn): the chains are the configuration's, read once; the catalogue's prices may change. */
const routings = new WeakMap<object, InertRouting>()

function inertRoutingOf(catalogue: Catalogue, routerOn: RouterOn): InertRouting {
  const known = routings.get(routerOn)
  if (known !== undefined) return known
  const chains = new Set(inertChainsOf(catalogue, routerOn))
  const callable = [...catalogue.chains.values()].filter((chain) => chain.isAgentCallable).map((chain) => chain.id)
  const routing: InertRouting = {
    chains,
    routed: callable.filter((chain) => !chains.has(chain)),
    prefer:
      chains.size === 0 || chains.size === callable.length
        ? undefined
        : (route) => chains.has(route.from.chain) || inertChainsOn(chains, route).length === 0,
  }
  routings.set(routerOn, routing)
  return routing
}

/** The chains of `inert` whose default contract a route uses: its source chain's router, and the executor of a swap on arrival. */
function inertChainsOn(inert: ReadonlySet<ChainCode>, route: CandidateRoute): ChainCode[] {
  const chains: ChainCode[] = []
  if (inert.has(route.from.chain)) chains.push(route.from.chain)
  // A bridge alone delivers to the recipient; only a swap on arrival runs in the executor there.
  const lane = route.bridge
  if (lane !== undefined && route.destinationSwaps.length > 0 && inert.has(lane.to.chain)) chains.push(lane.to.chain)
  return chains
}

/**
 * The chains where a route would use SwapEazi's inert default contracts under this deployment's routers, found from
 * the route alone (no transaction built): its source chain, where the user's transaction calls the router, and the
 * destination chain of a swap on arrival, which runs in the executor there. Empty when it needs neither.
 */
export function inertChainsOfRoute(catalogue: Catalogue, routerOn: RouterOn, route: CandidateRoute): ChainCode[] {
  return inertChainsOn(inertRoutingOf(catalogue, routerOn).chains, route)
}

/** The agent-callable chains with a router of the operator's own (read once per deployment). */
export function routerChainsOf(catalogue: Catalogue, routerOn: RouterOn): readonly ChainCode[] {
  return inertRoutingOf(catalogue, routerOn).routed
}

/**
 * Whether a paid swap here is refused (422 router_not_deployed) when its transactions would use the inert default
 * router or executor: everywhere but the embedded demonstration, whose x402 payments are worth nothing (ledger
 * settlement to the inert 0x…dEaD) and whose swaps are answered with "do not sign". A ledger recording payments to a
 * wallet of the operator's can still collect them, and MPP (`offersMpp`: the challenge also offers it) always moves
 * money. Discovery asks it for the paid swap of /api/x402/swap and build_swap, which offer x402 only.
 */
export function refusesInertRouter(deps: Pick<ServiceDeps, 'settler' | 'payTo'>, offersMpp: boolean): boolean {
  const isWorthless = deps.settler.mode === 'ledger' && isAddressEqual(deps.payTo, INERT_OWNER) && !offersMpp
  return !isWorthless
}

/** Whether some agent-callable chain has no router of the operator's own (read once per deployment). */
export function hasInertChains(catalogue: Catalogue, routerOn: RouterOn): boolean {
  return inertRoutingOf(catalogue, routerOn).chains.size > 0
}

/**
 * What routing prefers where some chains have no router of the operator's own: a route with no swap on arrival on
 * one of them, when its source chain has a router (from a chain without one nothing can be built, whatever the route).
 * Undefined where every chain has a router, or none has: nothing to prefer.
 */
export function preferredRoutes(catalogue: Catalogue, routerOn: RouterOn): ((route: CandidateRoute) => boolean) | undefined {
  return inertRoutingOf(catalogue, routerOn).prefer
}

/** The router a built route's transaction calls and, where a destination order runs, the executor there. */
export function routerUsesOf(build: BuildRouteTransactionReturnType): RouterUse[] {
  const uses: RouterUse[] = [
    {
      chain: build.sized.route.from.chain,
      address: build.transactionRequest.to,
      role: 'router',
      valueWei: hexToBigInt(build.transactionRequest.value),
    },
  ]
  const lane = build.sized.route.bridge
  if (build.destinationExecutor !== undefined && lane !== undefined)
    uses.push({ chain: lane.to.chain, address: build.destinationExecutor, role: 'executor' })
  return uses
}

/** Every bridge deposit a built route may end in (encodeBridgeCall), to read back where it delivers. */
const depositAbi = [...cctpTokenMessengerV2Abi, ...acrossSpokePoolAbi, ...oftAbi]

const addressOfWord = (word: Hex): Address => getAddress(sliceHex(word, 12, 32))

/**
 * Where a router call that is a bridge deposit carrying a destination order delivers it (encodeBridgeCall): the
 * executor it names, CCTP's mintRecipient and destinationCaller of a burn with a hook, Across's recipient of a deposit
 * with a message, LayerZero's `to` of a send with a compose message. None for a deposit to the recipient itself (no
 * message) or a call that is no deposit (a swap).
 */
function executorsOfDeposit(data: Hex): Address[] {
  let deposit: ReturnType<typeof decodeFunctionData<typeof depositAbi>>
  try {
    deposit = decodeFunctionData({ abi: depositAbi, data })
  } catch {
    return []
  }
  let named: Hex[] = []
  if (deposit.functionName === 'depositForBurnWithHook') named = [deposit.args[2], deposit.args[4]]
  else if (deposit.functionName === 'deposit' && deposit.args[11] !== '0x') named = [deposit.args[1]]
  else if (deposit.functionName === 'send' && deposit.args[0].composeMsg !== '0x') named = [deposit.args[0].to]
  const executors: Address[] = []
  for (const word of named) {
    if (word === zeroHash) continue
    const address = addressOfWord(word)
    if (!executors.some((known) => isAddressEqual(known, address))) executors.push(address)
  }
  return executors
}

/**
 * The executors a recorded router transaction's bridge deposits deliver to on their destination chains, where a swap
 * on arrival runs, read from its calldata (execute, executeWithPermit, or a batch's executeBatch, order by order):
 * what the transaction actually does, whatever routers this deployment is configured with today. `chainOf` names the
 * destination chain of the order at an index (a swap's toChain, a batch recipient's). Undefined when the data is not
 * a call of our router, or an order that bridges to an executor has no known destination chain.
 */
export function recordedExecutorUsesOf(
  transactionRequest: unknown,
  chainOf: (orderIndex: number) => ChainCode | undefined,
): RouterUse[] | undefined {
  const data = (transactionRequest as { data?: unknown } | null | undefined)?.data
  if (typeof data !== 'string' || !data.startsWith('0x')) return undefined
  type Order = { calls: readonly { data: Hex }[] }
  let orders: readonly Order[]
  try {
    const call = decodeFunctionData({ abi: swapEaziRouterAbi, data: data as Hex })
    if (call.functionName === 'execute' || call.functionName === 'executeWithPermit') orders = [call.args[0] as Order]
    else if (call.functionName === 'executeBatch') orders = call.args[0] as readonly Order[]
    else return undefined
  } catch {
    return undefined
  }
  const uses: RouterUse[] = []
  for (const [index, order] of orders.entries()) {
    const executors = order.calls.flatMap((call) => executorsOfDeposit(call.data))
    if (executors.length === 0) continue
    const chain = chainOf(index)
    if (chain === undefined) return undefined
    for (const address of executors) uses.push({ chain, address, role: 'executor' })
  }
  return uses
}

/** The uses that name the inert default router or its executor: a chain whose operator set no router of their own. */
export function inertUses(uses: readonly RouterUse[]): RouterUse[] {
  // Compared without checksumming: this runs on every built swap.
  return uses.filter((use) => isAddressEqual(use.address, use.role === 'router' ? INERT.router : INERT.executor))
}

/** What a use of the inert router means for whoever signs. */
function consequence(use: RouterUse): string {
  const value =
    use.valueWei === undefined || use.valueWei === 0n ? '' : ` and lose the ${formatEther(use.valueWei)} native token sent with them`
  return use.role === 'router'
    ? `they call ${use.address} on ${use.chain}, SwapEazi's inert default router, which is deployed nowhere: they would swap and send nothing, and the sender would pay their gas${value}`
    : `the bridge would deliver to ${use.address} on ${use.chain}, the executor of SwapEazi's inert default router, which is deployed nowhere: what it delivered there could never be moved again`
}

const chainsOf = (uses: readonly RouterUse[]): string => [...new Set(uses.map((use) => use.chain))].join(' and ')

/**
 * What this service does sell, for an answer that refuses or marks something it does not (its router is missing on
 * `inert`): swaps from the chains with a router of its operator's own that swap on arrival only on those, or nothing.
 */
export function soldInsteadText(routed: readonly ChainCode[], inert: readonly ChainCode[]): string {
  const elsewhere = `use a SwapEazi service that runs its own router on ${inert.join(' and ')}`
  if (routed.length === 0) return `This service sells no swap: its operator has set no router of their own on any chain; ${elsewhere}.`
  return `This service sells swaps from ${routed.join(', ')} (the chains with a router of its operator's own) that swap on arrival only on those: quote another route or pair among them (GET /api/v1/corridors lists what is sold), or ${elsewhere}.`
}

/**
 * The one next step of a swap or batch whose transaction depends on SwapEazi's inert default router on some chain
 * (its operator set no router there): the answer must say so before anyone signs. None otherwise.
 */
export function inertRouterSteps(uses: readonly RouterUse[]): string[] {
  const inert = inertUses(uses)
  if (inert.length === 0) return []
  return [
    `Do not sign these transactions: ${inert.map(consequence).join('; and ')}. This service's operator has not set a router of its own on ${chainsOf(inert)}. Use a SwapEazi service that runs its own router there.`,
  ]
}

/**
 * A paid swap that would charge real money for transactions that depend on the inert default router: refused (422
 * router_not_deployed) before any payment is asked or taken, since what it would sell cannot work; the refusal names
 * what is sold instead (`routerChains`: the chains with a router of the operator's own). A swap whose payment is only
 * recorded (x402's ledger mode, the embedded demo) is answered, its one next step saying not to sign.
 */
export function refuseChargeOnInertRouter(deps: Pick<ServiceDeps, 'catalogue' | 'routerOn'>, uses: readonly RouterUse[]): void {
  const inert = inertUses(uses)
  if (inert.length === 0) return
  const chains = [...new Set(inert.map((use) => use.chain))]
  const routerChains = routerChainsOf(deps.catalogue, deps.routerOn)
  throw new ServiceError(
    'router_not_deployed',
    `This swap is not sold here: ${inert.map(consequence).join('; and ')}. This service's operator has not set a router of its own on ${chainsOf(inert)}; nothing was charged. ${soldInsteadText(routerChains, chains)}`,
    { chains, routerChains: [...routerChains] },
  )
}
