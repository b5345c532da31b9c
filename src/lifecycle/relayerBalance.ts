import type { Address } from 'viem'
import type { Logger } from 'pino'

/** What the balance check reads of a chain; a viem public client fits. */
export type BalanceClient = {
  getBalance(parameters: { address: Address }): Promise<bigint>
  estimateFeesPerGas(): Promise<{ maxFeePerGas: bigint }>
}

/**
 * The gas one delivery from the key is counted at: a CCTP message with a swap on arrival as the quote prices it (the
 * bridge's 200,000 destination gas, the router's 100,000 overhead and a venue's 125,000). A LayerZero compose retry
 * costs about as much.
 */
export const RELAY_GAS_UNITS = 425_000n
/** Below this many deliveries' worth of native token on a chain, the key is reported low. */
export const LOW_BALANCE_RELAYS = 20n

export type RelayerBalance = { chain: string; balanceWei: bigint; maxFeePerGas: bigint; relaysLeft: bigint }

/**
 * Reads the relayer key's native balance on each chain and how many deliveries it pays for at the chain's fees now,
 * and warns (`relayer_balance_low`) where that is under LOW_BALANCE_RELAYS: the key pays the destination gas of every
 * CCTP delivery and compose retry, and an empty key leaves swaps pending. A chain that cannot be read is skipped
 * (the tracker and relayer report that RPC's failures themselves).
 */
export async function checkRelayerBalances(
  chains: Readonly<Record<string, BalanceClient>>,
  account: Address,
  log: Logger,
): Promise<RelayerBalance[]> {
  const read = await Promise.all(
    Object.entries(chains).map(async ([chain, client]): Promise<RelayerBalance | undefined> => {
      try {
        const [balanceWei, fees] = await Promise.all([client.getBalance({ address: account }), client.estimateFeesPerGas()])
        const perRelay = RELAY_GAS_UNITS * fees.maxFeePerGas
        return {
          chain,
          balanceWei,
          maxFeePerGas: fees.maxFeePerGas,
          relaysLeft: perRelay === 0n ? LOW_BALANCE_RELAYS : balanceWei / perRelay,
        }
      } catch {
        return undefined
      }
    }),
  )
  const balances = read.filter((entry): entry is RelayerBalance => entry !== undefined)
  for (const entry of balances)
    if (entry.relaysLeft < LOW_BALANCE_RELAYS)
      log.warn(
        {
          event: 'relayer_balance_low',
          chain: entry.chain,
          relayer: account,
          balance_wei: entry.balanceWei.toString(),
          relays_left: entry.relaysLeft.toString(),
        },
        `relayer_balance_low: the relayer key ${account} holds enough native token on ${entry.chain} for about ${entry.relaysLeft} deliveries at the fees now; fund it there, or swaps to ${entry.chain} stay pending`,
      )
  return balances
}
