import { decodeFunctionData, encodeAbiParameters } from 'viem'
import { describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { findRoutes, isEvmToken, sizeRoute } from '../../src/engine/index.ts'
import { COMPOSE_MESSAGE_BYTES, readPlanOf } from '../../src/market/feedCatalogue.ts'
import { oftSendCall, runDestinationInputs } from '../../src/tx/abis.ts'
import { buildRouteTransaction } from '../../src/tx/buildRouteTransaction.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { MANIFEST_DIR } from '../http/testApp.ts'

// The compose a lane's fee is quoted with must cost no less than any the builder sends on it: LayerZero prices a
// message by its length and the executor's compose gas, so the quote's message is as long as the longest destination
// order, and its gas at least what the builder asks.

const { files, catalogue } = loadCatalogue(MANIFEST_DIR)
const feeds = loadFeedCatalogue(MANIFEST_DIR)

describe('the compose quoted for a LayerZero lane', () => {
  it('is no cheaper than the compose of any route the catalogue builds: no longer a message, no more gas', () => {
    const tokens = [...catalogue.tokensByLowerKey.values()].filter(isEvmToken)
    let checked = 0
    for (const from of tokens)
      for (const to of tokens) {
        if (from.chain === to.chain) continue
        const found = findRoutes(catalogue, { from, to, amountIn: 1_000n * 10n ** BigInt(from.decimals), slippageE18: 5n * 10n ** 15n })
        if (found.kind !== 'routes') continue
        for (const priced of found.viable) {
          const lane = priced.route.bridge
          if (lane === undefined || priced.route.destinationSwaps.length === 0) continue
          if (lane.bridge.protocol !== 'stargate-v2' && lane.bridge.protocol !== 'usdt0-oft') continue
          const sized = sizeRoute(catalogue, priced.route, priced.amountIn, found.amounts.toAmount)
          if (sized === undefined) continue
          const built = buildRouteTransaction({
            catalogue,
            routerOn: () => routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'),
            sized,
            amounts: found.amounts,
            slippageE18: 5n * 10n ** 15n,
            sender: '0x1111111111111111111111111111111111111111',
            recipient: '0x2222222222222222222222222222222222222222',
            ref: `0x${'ab'.repeat(32)}`,
            nowSec: 1_800_000_000,
          })
          if (!built.ok || built.destinationOrder === undefined) throw new Error(`${priced.route.id} not built`)
          const message = encodeAbiParameters(runDestinationInputs, [built.destinationOrder])
          expect((message.length - 2) / 2, priced.route.id).toBeLessThanOrEqual(COMPOSE_MESSAGE_BYTES)
          // The OFT send the router makes, and the options it carries.
          const send = built.order.calls.find((call) => call.target === lane.sourceContract)
          const [sendParam] = decodeFunctionData({ abi: oftSendCall.abi, data: send?.data ?? '0x' }).args
          const plan = readPlanOf(feeds, lane.from.chain, files.venues.venues, catalogue.tokens, files.bridges.bridges, catalogue.pricing)
          const quoted = plan.messagingFees?.find(
            (spec) => spec.bridgeId === lane.bridge.id && spec.to === lane.to.chain && spec.compose !== undefined,
          )
          const gasOf = (options: string): bigint => BigInt(`0x${options.slice(-32)}`)
          expect(gasOf(quoted?.compose?.extraOptions ?? '0x00'), priced.route.id).toBeGreaterThanOrEqual(gasOf(sendParam.extraOptions))
          checked += 1
        }
      }
    expect(checked).toBeGreaterThan(10)
  })
})
