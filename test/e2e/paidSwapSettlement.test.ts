import { type Address, type Hash, type Hex, type PrivateKeyAccount, parseEventLogs, parseSignature, toHex } from 'viem'
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { wrapFetchWithPayment } from 'x402-fetch'
import { decodeXPaymentResponse } from 'x402/shared'
import { eip3009Abi } from '../../src/payments/x402/eip3009Abi.ts'
import { externalSettler } from '../../src/payments/x402/collectExternally.ts'
import type { ExternalSettlement, Settler } from '../../src/payments/x402/settlement.ts'
import { baseOnchainSettler, settlerFromConfig } from '../../src/app/settlerFromConfig.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { PaymentPayload, X402Challenge } from '../../src/schemas/x402.ts'
import { ANVIL_MNEMONIC, writeContractAndWait } from '../chain/anvil.ts'
import { type BaseUsdcChain, startBaseUsdc } from '../chain/baseUsdc.ts'
import { PUBLIC_URL, type TestApp, lazyMemoryStore, postJson, quoteBody, testApp } from '../http/testApp.ts'
import { type LocalFacilitator, startLocalFacilitator } from '../payments/localFacilitator.ts'

const SWAP = '/api/x402/swap'
const FEE = 20_000n
// anvil dev accounts by role; the last one mints (baseUsdc.ts).
const SETTLER_INDEX = 3
const FACILITATOR_INDEX = 4
const BYSTANDER_INDEX = 5

let chain: BaseUsdcChain
let facilitator: LocalFacilitator
/** The production on-chain settler, built from configuration against anvil. */
let onchain: Settler & ExternalSettlement
const store = lazyMemoryStore()

function devKey(addressIndex: number): Hex {
  const key = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex }).getHdKey().privateKey
  if (!key) throw new Error(`no key for anvil dev account ${addressIndex}`)
  return toHex(key)
}

const settlerAddress = (): Address => chain.anvil.accounts[SETTLER_INDEX]!.address
const facilitatorAddress = (): Address => chain.anvil.accounts[FACILITATOR_INDEX]!.address

beforeAll(async () => {
  chain = await startBaseUsdc()
  onchain = baseOnchainSettler({ rpcUrl: chain.anvil.rpcUrl, settlerPrivateKey: devKey(SETTLER_INDEX) })
  facilitator = await startLocalFacilitator({ rpcUrl: chain.anvil.rpcUrl, privateKey: devKey(FACILITATOR_INDEX) })
}, 120_000)

afterAll(async () => {
  await facilitator?.close()
  await chain?.stop()
  await store.sql.close()
})

/** A fresh payer holding `usdc` atomic USDC on the chain (no ETH: the settler pays the gas). */
async function newPayer(usdc: bigint): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey())
  if (usdc > 0n) await chain.mint(account.address, usdc)
  return account
}

const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address

function appWith(settler: Settler, payTo: Address): TestApp {
  return testApp({ clock: Date.now, store, settler, payTo })
}

type PaidRequest = { header: string; payload: PaymentPayload }

/**
 * x402-fetch 1.2.0 paying the in-process app as `payer`. Every X-PAYMENT it sends is kept (decoded), and
 * `beforePaid` runs before the paid retry reaches the app.
 */
function payingClient(
  app: () => TestApp,
  payer: PrivateKeyAccount,
  beforePaid?: (paid: PaidRequest) => Promise<void>,
): { swap(): Promise<Response>; payments: PaidRequest[] } {
  const payments: PaidRequest[] = []
  const pay = wrapFetchWithPayment(
    async (input, init) => {
      const header = new Headers(init?.headers).get('x-payment')
      if (header !== null) {
        const paid = { header, payload: PaymentPayload.parse(JSON.parse(Buffer.from(header, 'base64').toString('utf8'))) }
        payments.push(paid)
        await beforePaid?.(paid)
      }
      return app().request(input as string, init)
    },
    payer,
    FEE,
  )
  return {
    payments,
    swap: () =>
      pay(`${PUBLIC_URL}${SWAP}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(quoteBody({ fromAddress: payer.address.toLowerCase() })),
      }),
  }
}

/** The only payment x402-fetch sent. */
function onlyPayment(client: { payments: PaidRequest[] }): PaidRequest {
  expect(client.payments).toHaveLength(1)
  return client.payments[0]!
}

async function challengeOf(response: Response): Promise<X402Challenge> {
  expect(response.status).toBe(402)
  expect(response.headers.get('x-payment-response')).toBeNull()
  return X402Challenge.parse(await response.json())
}

async function rowsOf(payer: Address): Promise<{ payments: number; swaps: number }> {
  const count = async (table: 'x402_payments' | 'swaps'): Promise<number> => {
    const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from ${table} where payer = $1`, [payer.toLowerCase()])
    return row?.n ?? -1
  }
  return { payments: await count('x402_payments'), swaps: await count('swaps') }
}

async function balances(payer: Address, payTo: Address): Promise<{ payer: bigint; payTo: bigint }> {
  return { payer: await chain.balanceOf(payer), payTo: await chain.balanceOf(payTo) }
}

const gasNonceOf = (address: Address): Promise<number> => chain.anvil.publicClient.getTransactionCount({ address })

/** Asserts the receipt of `transaction` is a success sent by `from` that used the payer's authorization. */
async function expectSettledOnChain(transaction: string, from: Address, paid: PaidRequest): Promise<void> {
  const receipt = await chain.anvil.publicClient.getTransactionReceipt({ hash: transaction as Hash })
  expect(receipt.status).toBe('success')
  expect(receipt.from.toLowerCase()).toBe(from.toLowerCase())
  const used = parseEventLogs({ abi: eip3009Abi, logs: receipt.logs, eventName: 'AuthorizationUsed' })
  expect(used.map((log) => log.args)).toEqual([
    { authorizer: paid.payload.payload.authorization.from, nonce: paid.payload.payload.authorization.nonce },
  ])
}

describe('settlement mode onchain (settlerFromConfig against anvil, chain 8453)', () => {
  it('x402-fetch pays: 200 with the swap, a receipt naming a successful transaction, exactly 20000 moved, payment settled', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    const app = appWith(onchain, payTo)
    const before = await balances(payer.address, payTo)
    const client = payingClient(() => app, payer)

    const response = await client.swap()

    expect(response.status).toBe(200)
    const result = SwapResult.parse(await response.json())
    expect(result.transactionRequest.from.toLowerCase()).toBe(payer.address.toLowerCase())
    expect(result.transactionRequest.data).toMatch(/^0x[0-9a-f]{8,}$/)
    const paid = onlyPayment(client)
    expect(paid.payload.payload.authorization).toMatchObject({ from: payer.address, to: payTo, value: '20000' })

    const receipt = decodeXPaymentResponse(response.headers.get('x-payment-response') ?? '')
    expect(receipt).toEqual({
      success: true,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: 'base',
      payer: payer.address,
      settlement: 'onchain',
    })
    await expectSettledOnChain(receipt.transaction, settlerAddress(), paid)
    expect(await balances(payer.address, payTo)).toEqual({ payer: before.payer - FEE, payTo: before.payTo + FEE })

    const payment = await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)
    expect(payment).toMatchObject({
      status: 'settled',
      value: FEE,
      settlementMode: 'onchain',
      swapRef: result.swapEaziRef,
      transaction: receipt.transaction,
      payTo: payTo.toLowerCase(),
      error: null,
    })
    expect(payment?.settledAt).not.toBeNull()
    const swap = await store.getSwap(result.swapEaziRef)
    expect(swap).toMatchObject({
      channel: 'x402',
      payment: { payer: payer.address.toLowerCase(), nonce: paid.payload.payload.authorization.nonce.toLowerCase() },
      transactionRequest: result.transactionRequest,
    })
  }, 60_000)

  it('an unfunded payer gets 402 insufficient_funds: nothing moves, nothing is broadcast or recorded', async () => {
    const payer = await newPayer(0n)
    const payTo = freshAddress()
    const app = appWith(onchain, payTo)
    const gasNonce = await gasNonceOf(settlerAddress())
    const client = payingClient(() => app, payer)

    const challenge = await challengeOf(await client.swap())

    expect(challenge.error).toBe('insufficient_funds')
    expect(challenge.detail).toBe(
      `${payer.address} holds 0 atomic USDC on Base; the fee is 20000. Fund the wallet and pay again. Nothing was charged.`,
    )
    expect(onlyPayment(client).payload.payload.authorization.from).toBe(payer.address)
    expect(await balances(payer.address, payTo)).toEqual({ payer: 0n, payTo: 0n })
    expect(await gasNonceOf(settlerAddress())).toBe(gasNonce)
    expect(await rowsOf(payer.address)).toEqual({ payments: 0, swaps: 0 })
  }, 60_000)

  it('an authorization already used on chain (submitted directly first) gets 402 payment_already_used and is not settled again', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    const app = appWith(onchain, payTo)
    const before = await balances(payer.address, payTo)
    const bystander = chain.anvil.accounts[BYSTANDER_INDEX]!
    let direct: Hash | undefined
    // Someone else spends the signed authorization on chain before the paid request reaches the server.
    const client = payingClient(
      () => app,
      payer,
      async ({ payload }) => {
        const { authorization, signature } = payload.payload
        const { r, s, v, yParity } = parseSignature(signature as Hex)
        const receipt = await writeContractAndWait(chain.anvil, bystander, {
          address: chain.usdc,
          abi: eip3009Abi,
          functionName: 'transferWithAuthorization',
          args: [
            authorization.from,
            authorization.to,
            BigInt(authorization.value),
            BigInt(authorization.validAfter),
            BigInt(authorization.validBefore),
            authorization.nonce,
            v === undefined ? 27 + yParity : Number(v),
            r,
            s,
          ],
        })
        direct = receipt.transactionHash
      },
    )
    const gasNonce = await gasNonceOf(settlerAddress())

    const challenge = await challengeOf(await client.swap())

    expect(challenge.error).toBe('payment_already_used')
    const paid = onlyPayment(client)
    expect(direct).toBeDefined()
    await expectSettledOnChain(direct ?? '', bystander.address, paid)
    // Only the direct transfer moved money; the server broadcast nothing and recorded nothing.
    expect(await balances(payer.address, payTo)).toEqual({ payer: before.payer - FEE, payTo: before.payTo + FEE })
    expect(await gasNonceOf(settlerAddress())).toBe(gasNonce)
    expect(await rowsOf(payer.address)).toEqual({ payments: 0, swaps: 0 })
  }, 60_000)
})

describe('settlement mode facilitator (settlerFromConfig, x402’s own facilitator on the same anvil)', () => {
  beforeEach(() => {
    facilitator.calls.length = 0
  })

  it('x402-fetch pays: 200, a receipt with the facilitator’s transaction, exactly 20000 moved, /verify then /settle', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    const settler = settlerFromConfig({ mode: 'facilitator', url: facilitator.url })
    expect(settler.mode).toBe('facilitator')
    const app = appWith(settler, payTo)
    const before = await balances(payer.address, payTo)
    const client = payingClient(() => app, payer)

    const response = await client.swap()

    expect(response.status).toBe(200)
    const result = SwapResult.parse(await response.json())
    const paid = onlyPayment(client)
    const receipt = decodeXPaymentResponse(response.headers.get('x-payment-response') ?? '')
    expect(receipt).toEqual({
      success: true,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: 'base',
      payer: payer.address,
      settlement: 'facilitator',
    })
    await expectSettledOnChain(receipt.transaction, facilitatorAddress(), paid)
    expect(await balances(payer.address, payTo)).toEqual({ payer: before.payer - FEE, payTo: before.payTo + FEE })
    expect(facilitator.calls).toEqual(['/verify', '/settle'])
    expect(await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)).toMatchObject({
      status: 'settled',
      settlementMode: 'facilitator',
      swapRef: result.swapEaziRef,
      transaction: receipt.transaction,
    })
    expect(await rowsOf(payer.address)).toEqual({ payments: 1, swaps: 1 })
  }, 60_000)
})

describe('settlement_pending on a real chain (issue 16 item 6)', () => {
  const PENDING_SETTLER_INDEX = 6
  const pendingSettlerAddress = (): Address => chain.anvil.accounts[PENDING_SETTLER_INDEX]!.address
  const pendingNonceOf = (address: Address): Promise<number> =>
    chain.anvil.publicClient.getTransactionCount({ address, blockTag: 'pending' })
  /** The production settler, waiting only 500 ms for a receipt: with automine off, every settlement is pending. */
  const impatient = (): Settler =>
    baseOnchainSettler({ rpcUrl: chain.anvil.rpcUrl, settlerPrivateKey: devKey(PENDING_SETTLER_INDEX), receiptTimeoutMs: 500 })

  it('the retry looks the broadcast up instead of sending it again, and gets the swap once it is mined', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    const app = appWith(impatient(), payTo)
    const before = await balances(payer.address, payTo)
    const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
    let paid: PaidRequest
    let transaction: string
    await chain.anvil.testClient.setAutomine(false)
    try {
      const client = payingClient(() => app, payer)
      const first = await challengeOf(await client.swap())
      expect(first.error).toBe('settlement_pending')
      paid = onlyPayment(client)
      const row = await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)
      expect(row).toMatchObject({ status: 'unsettled', settledAt: null })
      transaction = row?.transaction ?? ''
      expect(transaction).toMatch(/^0x[0-9a-f]{64}$/)
      expect(first.detail).toContain(transaction)
      expect(await rowsOf(payer.address)).toEqual({ payments: 1, swaps: 1 })
      const broadcasts = await pendingNonceOf(pendingSettlerAddress())

      const retry = await postJson(app, SWAP, body, { 'x-payment': paid.header })
      expect(retry.headers.get('retry-after')).toBe('5')
      const pending = await challengeOf(retry)
      expect(pending.error).toBe('settlement_pending')
      expect(pending.detail).toContain(`${transaction} is not mined yet`)
      expect(await pendingNonceOf(pendingSettlerAddress())).toBe(broadcasts)
      await chain.anvil.testClient.mine({ blocks: 1 })
    } finally {
      await chain.anvil.testClient.setAutomine(true)
    }

    const delivered = await postJson(app, SWAP, body, { 'x-payment': paid.header })
    expect(delivered.status).toBe(200)
    const swap = SwapResult.parse(await delivered.json())
    const row = await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)
    expect(row).toMatchObject({ status: 'settled', transaction, swapRef: swap.swapEaziRef, error: null })
    expect(decodeXPaymentResponse(delivered.headers.get('x-payment-response') ?? '')).toMatchObject({ success: true, transaction })
    await expectSettledOnChain(transaction, pendingSettlerAddress(), paid)
    expect(await balances(payer.address, payTo)).toEqual({ payer: before.payer - FEE, payTo: before.payTo + FEE })
    expect(await rowsOf(payer.address)).toEqual({ payments: 1, swaps: 1 })
  }, 60_000)
})

describe('a settlement that does not complete', () => {
  it('fails cleanly: 402 settlement_failed, no swap and no payment row; the same X-PAYMENT then pays once', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    const failureMessage = 'The node refused the settlement transaction; nothing was charged.'
    const settled: string[] = []
    let isFirst = true
    const failingFirst: Settler = externalSettler(onchain.mode, {
      check: (payment) => onchain.check(payment),
      settle: async (payment, swapEaziRef) => {
        settled.push(swapEaziRef)
        if (isFirst) {
          isFirst = false
          return { ok: false, reason: 'settlement_failed', message: failureMessage }
        }
        return onchain.settle(payment, swapEaziRef)
      },
    })
    const before = await balances(payer.address, payTo)
    const gasNonce = await gasNonceOf(settlerAddress())
    const client = payingClient(() => appWith(failingFirst, payTo), payer)

    const challenge = await challengeOf(await client.swap())

    expect(challenge.error).toBe('settlement_failed')
    expect(challenge.detail).toBe(`${failureMessage} Nothing was charged.`)
    expect(settled).toHaveLength(1)
    const paid = onlyPayment(client)
    expect(await rowsOf(payer.address)).toEqual({ payments: 0, swaps: 0 })
    expect(await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)).toBeUndefined()
    expect(await balances(payer.address, payTo)).toEqual(before)
    expect(await gasNonceOf(settlerAddress())).toBe(gasNonce)

    // The same authorization, sent again by hand to an app with the production settler on the same store.
    const retry = await postJson(appWith(onchain, payTo), SWAP, quoteBody({ fromAddress: payer.address.toLowerCase() }), {
      'x-payment': paid.header,
    })

    expect(retry.status).toBe(200)
    const result = SwapResult.parse(await retry.json())
    const receipt = decodeXPaymentResponse(retry.headers.get('x-payment-response') ?? '')
    expect(receipt).toMatchObject({ success: true, payer: payer.address, settlement: 'onchain' })
    await expectSettledOnChain(receipt.transaction, settlerAddress(), paid)
    expect(await balances(payer.address, payTo)).toEqual({ payer: before.payer - FEE, payTo: before.payTo + FEE })
    expect(await gasNonceOf(settlerAddress())).toBe(gasNonce + 1)
    expect(await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)).toMatchObject({
      status: 'settled',
      swapRef: result.swapEaziRef,
      transaction: receipt.transaction,
    })
    expect(await rowsOf(payer.address)).toEqual({ payments: 1, swaps: 1 })
    expect(settled).toHaveLength(1)
  }, 60_000)

  it('ambiguous: 402 settlement_pending keeps the reservation as unsettled with its swap, and the same X-PAYMENT is never broadcast twice', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    const transaction = `0xabc${'0'.repeat(61)}`
    const message = `The settlement transaction ${transaction} was broadcast but not confirmed within 60 s; its outcome is being reconciled.`
    const settled: string[] = []
    const ambiguous: Settler = externalSettler(onchain.mode, {
      check: (payment) => onchain.check(payment),
      settle: async (_payment, swapEaziRef) => {
        settled.push(swapEaziRef)
        return { ok: false, reason: 'settlement_failed', isAmbiguous: true, transaction, message }
      },
    })
    const app = appWith(ambiguous, payTo)
    const before = await balances(payer.address, payTo)
    const client = payingClient(() => app, payer)

    const challenge = await challengeOf(await client.swap())

    expect(challenge.error).toBe('settlement_pending')
    expect(challenge.detail?.startsWith(message)).toBe(true)
    expect(challenge.detail).not.toMatch(/Nothing was charged/)
    expect(challenge.detail).toContain(`stays reserved for ${settled[0]}, so it can never pay twice`)
    const paid = onlyPayment(client)
    expect(settled).toHaveLength(1)
    expect(await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)).toMatchObject({
      status: 'unsettled',
      transaction,
      error: message,
      swapRef: settled[0],
      settledAt: null,
    })
    expect(await rowsOf(payer.address)).toEqual({ payments: 1, swaps: 1 })

    // The retry looks the payment up; this settler cannot reconcile, so it stays pending for the reconciler.
    const retry = await postJson(app, SWAP, quoteBody({ fromAddress: payer.address.toLowerCase() }), { 'x-payment': paid.header })
    expect(retry.headers.get('retry-after')).toBe('5')
    const replay = await challengeOf(retry)

    expect(replay.error).toBe('settlement_pending')
    expect(replay.detail).toContain(`(transaction ${transaction} on Base) for swap ${settled[0]} is not confirmed yet`)
    expect(settled).toHaveLength(1)
    expect(await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)).toMatchObject({
      status: 'unsettled',
      transaction,
    })
    expect(await rowsOf(payer.address)).toEqual({ payments: 1, swaps: 1 })
    expect(await balances(payer.address, payTo)).toEqual(before)
  }, 60_000)
})

describe("a pending settlement whose authorization expired on chain (the last test: it moves the chain's clock)", () => {
  const impatient = (): Settler => baseOnchainSettler({ rpcUrl: chain.anvil.rpcUrl, settlerPrivateKey: devKey(6), receiptTimeoutMs: 500 })

  it('releases a payment whose broadcast never landed once its authorization expired: nothing charged, nothing kept', async () => {
    const payer = await newPayer(1_000_000n)
    const payTo = freshAddress()
    let skewMs = 0
    const app = testApp({ clock: () => Date.now() + skewMs, store, settler: impatient(), payTo })
    const before = await balances(payer.address, payTo)
    let paid: PaidRequest
    await chain.anvil.testClient.setAutomine(false)
    try {
      const client = payingClient(() => app, payer)
      expect((await challengeOf(await client.swap())).error).toBe('settlement_pending')
      paid = onlyPayment(client)
      const transaction = (await store.getPayment(payer.address, paid.payload.payload.authorization.nonce))?.transaction
      // The transaction leaves the mempool unmined (a node restart, a fee spike), and the authorization runs out.
      await chain.anvil.testClient.dropTransaction({ hash: transaction as Hash })
    } finally {
      await chain.anvil.testClient.setAutomine(true)
    }
    skewMs = (Number(paid.payload.payload.authorization.validBefore) - Math.floor(Date.now() / 1000) + 60) * 1000
    // Expiry is judged by the chain's time: Base's clock passes validBefore too (the last test of the file, since
    // the chain stays ahead of the wall clock afterwards).
    await chain.anvil.testClient.increaseTime({ seconds: skewMs / 1000 })
    await chain.anvil.testClient.mine({ blocks: 1 })

    const retry = await challengeOf(
      await postJson(app, SWAP, quoteBody({ fromAddress: payer.address.toLowerCase() }), { 'x-payment': paid.header }),
    )
    expect(retry.error).toBe('authorization_expired')
    expect(retry.detail).toMatch(/Nothing was charged\.$/)
    expect(await store.getPayment(payer.address, paid.payload.payload.authorization.nonce)).toBeUndefined()
    expect(await rowsOf(payer.address)).toEqual({ payments: 0, swaps: 0 })
    expect(await balances(payer.address, payTo)).toEqual(before)
  }, 60_000)
})
