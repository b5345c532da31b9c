import { E18, formatFixedDown } from '../engine/index.ts'
import { isAddressEqual } from 'viem'
import { INERT_OWNER } from '../contracts/deployRouter.ts'
import type { Health } from '../schemas/discovery.ts'
import type { ServiceDeps } from './deps.ts'
import { inertChainsOf } from './inertRouter.ts'

/** Liveness plus what a caller needs to trust a quote: the snapshot's age and the EUR/ZAR rate with its source. */
export function getHealth(deps: ServiceDeps): Health {
  const { catalogue, files } = deps
  const asOfMs = Date.parse(catalogue.asOf)
  const rate = (catalogue.fxUsdE18.EUR * E18) / catalogue.fxUsdE18.ZAR
  const market = marketHealth(deps)
  const inertChains = inertChainsOf(deps.catalogue, deps.routerOn)
  return {
    status:
      market.chains.some((chain) => chain.stale.length > 0) || market.currencies.some((c) => c.stale !== undefined) ? 'degraded' : 'ok',
    version: deps.version,
    market,
    snapshot: {
      asOf: catalogue.asOf,
      ageSeconds: Math.max(0, Math.floor((deps.clock() - asOfMs) / 1000)),
      source: files.market.source,
    },
    rates: {
      EURZAR: {
        rate: formatFixedDown(rate, 4),
        asOf: catalogue.asOf,
        source:
          deps.market === undefined
            ? `EUR/USD ÷ ZAR/USD from the market snapshot: ${files.market.fx.EUR.source}`
            : 'EUR/USD ÷ ZAR/USD from the live market where a chain reads them (market.currencies), else the snapshot',
      },
    },
    payments: {
      settlement: deps.settler.mode,
      payTo: deps.payTo,
      network: 'base',
      mpp: deps.mpp === undefined ? { available: false } : { available: true, chainId: deps.mpp.chainId, recipient: deps.mpp.recipient },
    },
    store: { driver: deps.store.sql.describe.startsWith('postgresql') ? 'postgresql' : 'pglite' },
    routers: { inertChains },
    warnings: [
      ...(isAddressEqual(deps.payTo, INERT_OWNER)
        ? [
            {
              code: 'pay_to_default' as const,
              message:
                deps.mpp === undefined
                  ? `x402 payments name ${INERT_OWNER}, an address nobody controls, and are only recorded (settlement ${deps.settler.mode}): this service charges nothing and is a demonstration.`
                  : `x402 payments name ${INERT_OWNER}, an address nobody controls, and are only recorded (settlement ${deps.settler.mode}): x402 charges nothing here, but MPP on /api/mpp/swap takes real pathUSD.`,
            },
          ]
        : []),
      ...(inertChains.length > 0
        ? [
            {
              code: 'router_default_inert' as const,
              message: `No router of the operator's own on ${inertChains.join(', ')}: swaps that depend on those chains target SwapEazi's inert default router, deployed nowhere: their answers say not to sign, and paid swaps that depend on them are refused (router_not_deployed) wherever the payment would be worth something.`,
            },
          ]
        : []),
    ],
  }
}

/** Where each chain and currency is priced from now: the live market's reads, or the snapshot everywhere. */
function marketHealth(deps: ServiceDeps): Health['market'] {
  const { files } = deps
  if (deps.market === undefined)
    return {
      isFxMarketClosed: false,
      chains: files.chains.chains
        .filter((chain) => files.market.chains[chain.id] !== undefined)
        .map((chain) => ({ chain: chain.id, source: 'snapshot', stale: [] })),
      currencies: Object.keys(files.market.fx).map((currency) => ({ currency, source: 'snapshot' })),
    }
  const status = deps.market.status()
  return {
    isFxMarketClosed: status.isFxMarketClosed,
    chains: status.chains.map(({ blockAgeSec, ...chain }) => ({
      ...chain,
      ...(blockAgeSec === undefined ? {} : { blockAgeSeconds: blockAgeSec }),
    })),
    currencies: status.currencies,
  }
}
