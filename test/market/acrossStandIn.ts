// A local stand-in for Across's public API: `GET /api/suggested-fees?inputToken=&outputToken=&originChainId=
// &destinationChainId=&amount=` in the shape docs.across.to and Across's SDK types give (pct 1e18-scaled strings,
// totals in the input token's atomic units). It prices as Across's relayer fee calculator is described: a capital fee
// whose share rises linearly from a lower to an upper bound up to a cutoff and at the upper bound's margin beyond
// it, an LP fee share, and a gas fee that is the same whatever the amount; `totalRelayFee` is their sum (or, with
// `isTotalWithoutLp`, capital and gas only, as the API's first version answered). Its `estimatedFillTimeSec` is the
// lane's fill time up to `maxDepositInstant` and a rebalance time above it, as Across's API decides it (900 s).
// Nothing here reaches the internet.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

const E18 = 10n ** 18n

/** How one lane prices: shares 1e18-scaled, amounts in the input token's atomic units. */
export type StandInLane = {
  capitalLowerPct: bigint
  capitalUpperPct: bigint
  /** Where the capital fee's marginal share stops rising, in atomic units. */
  capitalCutoff: bigint
  lpPct: bigint
  gasTotal: bigint
  minDeposit: bigint
  maxDeposit: bigint
  /** What relayers fill at once; default maxDeposit. */
  maxDepositInstant?: bigint
  /** `estimatedFillTimeSec` up to maxDepositInstant (default 2); above it, REBALANCE_FILL_SEC. */
  fillTimeSec?: number | string
  isTotalWithoutLp?: boolean
  /** Answer without `estimatedFillTimeSec` and `limits.maxDepositInstant`, as an older API might. */
  isWithoutFillFigures?: boolean
  /** Pad each answer with a field of this many bytes (0: none), as an answer that is not one lane's fees. */
  paddingBytes?: number
  /** Answer this lane with this HTTP status, whatever it asks (0: answer it). */
  failWith?: number
}

/** Across's fill estimate above maxDepositInstant: its default rebalance time (15 minutes). */
export const REBALANCE_FILL_SEC = 900

/** 5 bp to 15 bp of capital with a cutoff at 1,000,000 USDC (6 decimals), 1 bp of LP fee, 0.25 USDC of gas. */
export const DEFAULT_LANE: StandInLane = {
  capitalLowerPct: 5n * 10n ** 14n,
  capitalUpperPct: 15n * 10n ** 14n,
  capitalCutoff: 1_000_000n * 10n ** 6n,
  lpPct: 10n ** 14n,
  gasTotal: 250_000n,
  minDeposit: 1_000_000n,
  maxDeposit: 1_500_000n * 10n ** 6n,
}

/** The capital fee of `amount`: the lower bound's share of all of it, plus the rising part up to the cutoff and beyond. */
export function capitalFee(lane: StandInLane, amount: bigint): bigint {
  const rise = lane.capitalUpperPct - lane.capitalLowerPct
  const under = amount < lane.capitalCutoff ? amount : lane.capitalCutoff
  const over = amount > lane.capitalCutoff ? amount - lane.capitalCutoff : 0n
  const triangle = lane.capitalCutoff === 0n ? 0n : (rise * under * under) / (2n * lane.capitalCutoff * E18)
  return (lane.capitalLowerPct * amount) / E18 + triangle + (rise * over) / E18
}

/** What the stand-in answers for `amount` on `lane`. */
export function suggestedFeesFor(lane: StandInLane, amount: bigint) {
  const capital = capitalFee(lane, amount)
  const lp = (lane.lpPct * amount) / E18
  const gas = lane.gasTotal
  const pct = (total: bigint) => (amount === 0n ? '0' : ((total * E18) / amount).toString())
  const relay = capital + gas + (lane.isTotalWithoutLp === true ? 0n : lp)
  const instant = lane.maxDepositInstant ?? lane.maxDeposit
  return {
    estimatedFillTimeSec: amount > instant ? REBALANCE_FILL_SEC : (lane.fillTimeSec ?? 2),
    totalRelayFee: { pct: pct(relay), total: relay.toString() },
    relayerCapitalFee: { pct: pct(capital), total: capital.toString() },
    relayerGasFee: { pct: pct(gas), total: gas.toString() },
    lpFee: { pct: pct(lp), total: lp.toString() },
    timestamp: String(Math.floor(Date.now() / 1000)),
    isAmountTooLow: amount < lane.minDeposit,
    quoteBlock: '1',
    spokePoolAddress: '0x0000000000000000000000000000000000000001',
    exclusiveRelayer: '0x0000000000000000000000000000000000000000',
    exclusivityDeadline: 0,
    fillDeadline: String(Math.floor(Date.now() / 1000) + 3600),
    limits: {
      minDeposit: lane.minDeposit.toString(),
      maxDeposit: lane.maxDeposit.toString(),
      maxDepositInstant: instant.toString(),
      maxDepositShortDelay: lane.maxDeposit.toString(),
      recommendedDepositInstant: instant.toString(),
    },
  }
}

export type AcrossStandIn = {
  /** The API's base, as SWAPEAZI_ACROSS_API_URL takes it: `http://127.0.0.1:<port>/api`. */
  url: string
  /** Every request, in order: its query and when it arrived (ms). */
  requests: { query: URLSearchParams; atMs: number }[]
  /** Sockets requests arrived on (keep-alive reuses one). */
  sockets: Set<unknown>
  /** Sets how a lane prices, by `<originChainId>><destinationChainId>`; others use DEFAULT_LANE. */
  setLane(originChainId: number, destinationChainId: number, lane: Partial<StandInLane>): void
  /** The next `count` requests are answered with `status`, whatever they ask. */
  failNext(count: number, status: number): void
  /** Each answer waits this long before its headers (a timeout). */
  setDelayMs(ms: number): void
  /** Each answer sends its headers at once, then its body one byte every `ms` (0: all at once), as a stalled proxy might. */
  setDribbleMs(ms: number): void
  laneOf(originChainId: number, destinationChainId: number): StandInLane
  /** The connections open to it now (a client's keep-alive pool holds them open between requests). */
  openConnections(): Promise<number>
  close(): Promise<void>
}

export async function startAcrossStandIn(): Promise<AcrossStandIn> {
  const lanes = new Map<string, StandInLane>()
  const requests: AcrossStandIn['requests'] = []
  const sockets = new Set<unknown>()
  let failures = { count: 0, status: 503 }
  let delayMs = 0
  let dribbleMs = 0
  const laneOf = (origin: number, destination: number): StandInLane => lanes.get(`${origin}>${destination}`) ?? DEFAULT_LANE

  /** The status and body a request gets. */
  const answerOf = (url: URL): { status: number; body: unknown } => {
    if (failures.count > 0) {
      failures = { ...failures, count: failures.count - 1 }
      return { status: failures.status, body: { message: 'stand-in failure' } }
    }
    if (url.pathname !== '/api/suggested-fees') return { status: 404, body: { message: 'not found' } }
    const amountText = url.searchParams.get('amount') ?? ''
    const origin = Number(url.searchParams.get('originChainId'))
    const destination = Number(url.searchParams.get('destinationChainId'))
    if (!/^[0-9]+$/.test(amountText) || !url.searchParams.get('inputToken') || !url.searchParams.get('outputToken'))
      return { status: 400, body: { code: 'INVALID_PARAM', message: 'amount, inputToken and outputToken are required' } }
    const lane = laneOf(origin, destination)
    if (lane.failWith !== undefined && lane.failWith !== 0) return { status: lane.failWith, body: { message: 'stand-in lane failure' } }
    const fees = suggestedFeesFor(lane, BigInt(amountText))
    if (lane.isWithoutFillFigures === true) {
      const { estimatedFillTimeSec: _fill, limits, ...rest } = fees
      const { maxDepositInstant: _instant, ...otherLimits } = limits
      return { status: 200, body: { ...rest, limits: otherLimits } }
    }
    if (lane.paddingBytes !== undefined && lane.paddingBytes > 0)
      return { status: 200, body: { ...fees, padding: 'x'.repeat(lane.paddingBytes) } }
    return { status: 200, body: fees }
  }

  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://stand-in')
    requests.push({ query: url.searchParams, atMs: Date.now() })
    sockets.add(request.socket)
    const { status, body } = answerOf(url)
    const send = (): void => {
      if (response.destroyed) return
      response.writeHead(status, { 'content-type': 'application/json' })
      const text = JSON.stringify(body)
      if (dribbleMs <= 0) {
        response.end(text)
        return
      }
      let at = 0
      const timer = setInterval(() => {
        if (response.destroyed) clearInterval(timer)
        else if (at < text.length) response.write(text.charAt(at++))
        else {
          clearInterval(timer)
          response.end()
        }
      }, dribbleMs)
      response.on('close', () => clearInterval(timer))
    }
    if (delayMs > 0) setTimeout(send, delayMs)
    else send()
  }

  const server: Server = createServer(answer)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/api`,
    requests,
    sockets,
    setLane(originChainId, destinationChainId, lane) {
      lanes.set(`${originChainId}>${destinationChainId}`, { ...laneOf(originChainId, destinationChainId), ...lane })
    },
    failNext(count, status) {
      failures = { count, status }
    },
    setDelayMs(ms) {
      delayMs = ms
    },
    setDribbleMs(ms) {
      dribbleMs = ms
    },
    laneOf,
    openConnections: () =>
      new Promise((resolve, reject) => server.getConnections((error, count) => (error === null ? resolve(count) : reject(error)))),
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
