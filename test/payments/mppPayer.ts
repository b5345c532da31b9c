import { Challenge, Credential } from 'mppx'
import { Mppx, tempo } from 'mppx/client'
import { type Address, type Client, concat, createClient, defineChain, type Hex, http, keccak256, slice, toHex } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import { sendTransactionSync } from 'viem/actions'
import { Actions } from 'viem/tempo'
import { tempo as tempoMainnet } from 'viem/tempo/chains'
import { PATH_USD } from '../../src/payments/mpp/tempoConstants.ts'

/** A viem client on the Tempo chain `chainId` behind `rpcUrl` (the stand-in in tests). */
export function tempoClient(rpcUrl: string, chainId: number): Client {
  return createClient({ chain: defineChain({ ...tempoMainnet, id: chainId }), transport: http(rpcUrl, { retryCount: 0 }) })
}

/**
 * mppx's own client, paying from `account` in push mode (it sends the transfer, then the hash) through `fetch`
 * (the app's in-process fetch in tests); `polyfill: false` leaves globalThis.fetch alone.
 */
export function mppClient(account: PrivateKeyAccount, rpcUrl: string, chainId: number, fetch: typeof globalThis.fetch) {
  return Mppx.create({
    polyfill: false,
    fetch,
    methods: [tempo.charge({ account, mode: 'push', getClient: () => tempoClient(rpcUrl, chainId) })],
  })
}

/**
 * The attribution memo mppx 0.11's client writes (32 bytes): keccak("mpp")[0..4], version 1, keccak(realm)[0..10],
 * ten zero bytes (no client id), keccak(challenge id)[0..7]. Written here from the layout mppx documents, so a test can
 * send a transfer of its own choosing that is still bound to a challenge.
 */
export function attributionMemo(realm: string, challengeId: string): Hex {
  return concat([
    slice(keccak256(toHex('mpp')), 0, 4),
    '0x01',
    slice(keccak256(toHex(realm)), 0, 10),
    `0x${'00'.repeat(10)}`,
    slice(keccak256(toHex(challengeId)), 0, 7),
  ])
}

export type Transfer = { to: Address; amountAtomic: bigint; memo?: Hex; token?: Address }

/** Sends one Tempo transaction of pathUSD transfers from `account` and returns its hash (push mode, done by hand). */
export async function sendTransfers(client: Client, account: PrivateKeyAccount, transfers: readonly Transfer[]): Promise<Hex> {
  const calls = transfers.map((transfer) =>
    Actions.token.transfer.call(client, {
      amount: transfer.amountAtomic,
      to: transfer.to,
      token: transfer.token ?? PATH_USD,
      ...(transfer.memo === undefined ? {} : { memo: transfer.memo }),
    }),
  )
  const receipt = await sendTransactionSync(client, { account, chain: client.chain, calls } as Parameters<typeof sendTransactionSync>[1])
  return receipt.transactionHash
}

/** The `Authorization` value of a push credential: `hash` presented for the challenge of a 402 response. */
export function pushCredential(response: Response, hash: Hex, payer: Address, chainId: number): string {
  const challenge = Challenge.fromResponse(response)
  return Credential.serialize(Credential.from({ challenge, payload: { type: 'hash', hash }, source: `did:pkh:eip155:${chainId}:${payer}` }))
}
