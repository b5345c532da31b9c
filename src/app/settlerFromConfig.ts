import { createPublicClient, createWalletClient, defineChain, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { base } from 'viem/chains'
import type { Config } from '../config.ts'
import { facilitatorSettler } from '../payments/x402/facilitatorSettler.ts'
import { ledgerSettler } from '../payments/x402/ledgerSettler.ts'
import { onchainSettler } from '../payments/x402/onchainSettler.ts'
import type { ExternalSettlement, Settler } from '../payments/x402/settlement.ts'

/** The settler the configuration names (DESIGN 7.10): ledger, on-chain on a Base RPC, or an x402 facilitator. */
export function settlerFromConfig(settlement: Config['payments']['settlement']): Settler {
  switch (settlement.mode) {
    case 'ledger':
      return ledgerSettler()
    case 'facilitator':
      return facilitatorSettler({ url: settlement.url })
    case 'onchain':
      return baseOnchainSettler(settlement)
  }
}

/** The on-chain settler on Base through the configured RPC, with its settler key paying the gas. */
export function baseOnchainSettler(settlement: {
  rpcUrl: string
  settlerPrivateKey: `0x${string}`
  /** How long a settlement waits for its receipt before it is settlement_pending (onchainSettler's default: 60 s). */
  receiptTimeoutMs?: number
}): Settler & ExternalSettlement {
  // Base mainnet's id and contracts, reached through the configured RPC only (never a public default).
  const chain = defineChain({ ...base, rpcUrls: { default: { http: [settlement.rpcUrl] } } })
  const transport = http(settlement.rpcUrl)
  const account = privateKeyToAccount(settlement.settlerPrivateKey)
  return onchainSettler({
    publicClient: createPublicClient({ chain, transport }),
    walletClient: createWalletClient({ chain, transport, account }),
    ...(settlement.receiptTimeoutMs === undefined ? {} : { receiptTimeoutMs: settlement.receiptTimeoutMs }),
  })
}
