import { E18, formatFixedDown } from '../engine/index.ts'
import type { Health } from '../schemas/discovery.ts'
import type { ServiceDeps } from './deps.ts'

/** Liveness plus what a caller needs to trust a quote: the snapshot's age and the EUR/ZAR rate with its source. */
export function getHealth(deps: ServiceDeps): Health {
  const { catalogue, files } = deps
  const asOfMs = Date.parse(catalogue.asOf)
  const rate = (catalogue.fxUsdE18.EUR * E18) / catalogue.fxUsdE18.ZAR
  return {
    status: 'ok',
    version: deps.version,
    snapshot: {
      asOf: catalogue.asOf,
      ageSeconds: Math.max(0, Math.floor((deps.clock() - asOfMs) / 1000)),
      source: files.market.source,
    },
    rates: {
      EURZAR: {
        rate: formatFixedDown(rate, 4),
        asOf: catalogue.asOf,
        source: `EUR/USD ÷ ZAR/USD from the market snapshot: ${files.market.fx.EUR.source}`,
      },
    },
    payments: {
      settlement: deps.settler.mode,
      payTo: deps.payTo,
      network: 'base',
      mpp: deps.mpp === undefined ? { available: false } : { available: true, chainId: deps.mpp.chainId, recipient: deps.mpp.recipient },
    },
    store: { driver: deps.store.sql.describe.startsWith('postgresql') ? 'postgresql' : 'pglite' },
  }
}
