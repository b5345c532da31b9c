// Paid swap throughput in process: payForSwap (screen, build, verify, reserve, settle on the ledger, record) on the
// real deps and an in-memory PGlite store, against bare viem `recoverTypedDataAddress` over the same authorizations,
// one call at a time, the two alternating in short slices within each round so both see the same machine load.
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import {
  getAddress,
  type Hex,
  keccak256,
  type LocalAccount,
  type RecoverTypedDataAddressParameters,
  recoverTypedDataAddress,
  stringToHex,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { buildAppDeps } from '../src/app/buildAppDeps.ts'
import { benchConfig } from './benchConfig.ts'
import type { ServerDeps } from '../src/app/createServer.ts'
import { decodePaymentHeader } from '../src/payments/x402/decodePaymentHeader.ts'
import { BASE_CHAIN_ID } from '../src/payments/x402/paymentRequirements.ts'
import { TRANSFER_WITH_AUTHORIZATION_TYPES, verifyPayment } from '../src/payments/x402/verifyPayment.ts'
import { QuoteParams } from '../src/schemas/quote.ts'
import { PaymentPayload, type PaymentRequirements } from '../src/schemas/x402.ts'
import { buildSwapTransaction } from '../src/service/buildSwapTransaction.ts'
import { payForSwap } from '../src/service/payForSwap.ts'
import { PAID_SWAP_PATHS, paymentRequirementsFor } from '../src/service/paymentRequirementsFor.ts'
import { newSwapRef } from '../src/service/swapRef.ts'
import { signPayment } from '../test/payments/signPayment.ts'

/** Distinct payers the authorizations are spread over (nonces are random 32 bytes, so never reused). */
const PAYERS = 4
/** Longer than x402-fetch's 300 s so a pre-signed payment is still valid rounds later; under verify's 3,600 s cap. */
const VALIDITY_SEC = 1_800
/** The quote endpoint bench's request: 1,000 USDC to USDT on Ethereum, the sender being the payer. */
const SWAP_BODY = { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000' }

export type PaidSwapOptions = {
  rounds?: number
  /** Measured time per round for each side. */
  roundSec?: number
  /** Within a round the sides alternate in slices this long, so both see the same load from other tenants. */
  sliceSec?: number
  warmupSec?: number
  breakdownCalls?: number
}

export type PaidSwapRound = { baselinePerSec: number; baselineCalls: number; paidPerSec: number; paidCalls: number; paidSec: number }

/** Mean microseconds per paid swap in each step, from a separate instrumented pass (not the timed rounds). */
export type PaidSwapBreakdown = {
  calls: number
  /** payForSwap end to end, on deps whose store, screener and settler are wrapped in timers. */
  totalUs: number
  /** Store calls made by payForSwap: on the ledger one statement (record); otherwise the reservation, then the record. */
  reserveUs: number
  recordUs: number
  screenUs: number
  settleUs: number
  /** Replayed beside the call on the same inputs (payForSwap calls them directly, so they cannot be wrapped). */
  buildUs: number
  decodeUs: number
  verifyUs: number
  /** Bare recoverTypedDataAddress on the same authorization, replayed likewise: the part of verify that is viem. */
  recoverUs: number
  /** total minus every step above: swap ref, requirements, result formatting, logging, awaits. */
  otherUs: number
}

export type PaidSwapResult = {
  roundSec: number
  sliceSec: number
  warmupSec: number
  signedPayments: number
  signPerSec: number
  rounds: PaidSwapRound[]
  baselineBest: number
  paidBest: number
  ratio: number
  breakdown: PaidSwapBreakdown
  store: string
}

/** A payment as a client sends it, plus the exact arguments verifyPayment hands to recoverTypedDataAddress. */
type SignedPayment = {
  params: QuoteParams
  header: string
  recover: RecoverTypedDataAddressParameters<typeof TRANSFER_WITH_AUTHORIZATION_TYPES, 'TransferWithAuthorization'>
}

const now = (): number => performance.now()

/** Calls made, and the wall-clock milliseconds they took. */
type Phase = { calls: number; ms: number }

/** Signs the way x402-fetch does (test/payments/signPayment.ts), keeping the typed data for the bare-recovery baseline. */
async function signPayments(
  accounts: LocalAccount[],
  requirements: PaymentRequirements,
  count: number,
  first: number,
): Promise<SignedPayment[]> {
  const nowSec = Math.floor(Date.now() / 1000)
  const domain = {
    name: requirements.extra.name,
    version: requirements.extra.version,
    chainId: BASE_CHAIN_ID,
    verifyingContract: requirements.asset,
  }
  const signed: SignedPayment[] = []
  for (let i = 0; i < count; i++) {
    const account = accounts[(first + i) % accounts.length]!
    const { payload, header } = await signPayment(account, {
      payTo: requirements.payTo,
      nowSec,
      validBefore: BigInt(nowSec + VALIDITY_SEC),
      nonce: toHex(randomBytes(32)),
    })
    const { signature, authorization } = PaymentPayload.parse(payload).payload
    const message = {
      from: getAddress(authorization.from),
      to: getAddress(authorization.to),
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as Hex,
    }
    signed.push({
      params: QuoteParams.parse({ ...SWAP_BODY, fromAddress: account.address }),
      header,
      recover: {
        domain,
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message,
        signature: signature as Hex,
      },
    })
  }
  return signed
}

/** Bare recovery over the pool, round-robin, for `durationSec`; every call must recover the signer. */
async function recoverFor(pool: readonly SignedPayment[], durationSec: number): Promise<Phase> {
  const start = now()
  const end = start + durationSec * 1_000
  let calls = 0
  do {
    const payment = pool[calls % pool.length]!
    const signer = await recoverTypedDataAddress(payment.recover)
    if (signer !== payment.recover.message.from) throw new Error(`baseline recovered ${signer}, expected ${payment.recover.message.from}`)
    calls += 1
  } while (now() < end)
  return { calls, ms: now() - start }
}

/** Paid swaps one after another for `durationSec`, or until the unused payments run out; each must come back paid. */
async function payFor(deps: ServerDeps, resource: string, pool: SignedPayment[], durationSec: number): Promise<Phase> {
  const start = now()
  const end = start + durationSec * 1_000
  let calls = 0
  while (now() < end) {
    const payment = pool.pop()
    if (payment === undefined) break
    const outcome = await payForSwap(deps, { params: payment.params, paymentHeader: payment.header, resource, channel: 'x402' })
    if (outcome.kind !== 'paid')
      throw new Error(
        `paid swap ${calls + 1} was refused (${outcome.challenge.error}: ${outcome.challenge.detail}): a benchmark of rejections is worthless`,
      )
    calls += 1
  }
  if (calls === 0) throw new Error('no paid swap was made: the pool of signed payments is empty')
  return { calls, ms: now() - start }
}

/** A copy of the function that adds its duration (ms) to `totals[key]` when its promise settles. */
function timed<A extends unknown[], R>(
  totals: Record<string, number>,
  key: string,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  totals[key] = 0
  return async (...args) => {
    const start = now()
    try {
      return await fn(...args)
    } finally {
      totals[key] = (totals[key] ?? 0) + now() - start
    }
  }
}

/** payForSwap on timer-wrapped deps, with build, decode and verify replayed on the same inputs beside each call. */
async function breakDown(
  deps: ServerDeps,
  resource: string,
  requirements: PaymentRequirements,
  pool: SignedPayment[],
  calls: number,
): Promise<PaidSwapBreakdown> {
  const ms: Record<string, number> = {}
  const { store, screener, settler } = deps
  const wrapped: ServerDeps = {
    ...deps,
    store: {
      ...store,
      reservePayment: timed(ms, 'reserve', store.reservePayment.bind(store)),
      recordPaidSwap: timed(ms, 'record', store.recordPaidSwap.bind(store)),
      recordSettledSwap: timed(ms, 'record', store.recordSettledSwap.bind(store)),
    },
    screener: { screen: timed(ms, 'screen', screener.screen.bind(screener)) },
    settler: { mode: settler.mode, collect: timed(ms, 'collect', settler.collect.bind(settler)) },
  }
  ms['total'] = ms['build'] = ms['decode'] = ms['verify'] = ms['recover'] = 0
  for (let i = 0; i < calls; i++) {
    const payment = pool.pop()
    if (payment === undefined) throw new Error('the breakdown ran out of signed payments')
    let t = now()
    buildSwapTransaction(deps, { params: payment.params, swapEaziRef: newSwapRef(deps.clock()) })
    ms['build'] += now() - t
    t = now()
    const decoded = decodePaymentHeader(payment.header)
    ms['decode'] += now() - t
    if (!decoded.ok) throw new Error(`the breakdown's payment does not decode: ${decoded.message}`)
    t = now()
    const verified = await verifyPayment({ payload: decoded.payload, requirements, nowSec: Math.floor(deps.clock() / 1000) })
    ms['verify'] += now() - t
    if (!verified.ok) throw new Error(`the breakdown's payment does not verify: ${verified.message}`)
    t = now()
    await recoverTypedDataAddress(payment.recover)
    ms['recover'] += now() - t
    t = now()
    const outcome = await payForSwap(wrapped, { params: payment.params, paymentHeader: payment.header, resource, channel: 'x402' })
    ms['total'] += now() - t
    if (outcome.kind !== 'paid')
      throw new Error(`breakdown swap ${i + 1} was refused (${outcome.challenge.error}): ${outcome.challenge.detail}`)
  }
  const us = (key: string): number => ((ms[key] ?? 0) * 1_000) / calls
  // The settler's collect includes the store writes it makes (reserve, record), timed inside it as well.
  const steps = us('screen') + us('collect') + us('build') + us('decode') + us('verify')
  return {
    calls,
    totalUs: us('total'),
    reserveUs: us('reserve'),
    recordUs: us('record'),
    screenUs: us('screen'),
    settleUs: us('collect') - us('reserve') - us('record'),
    buildUs: us('build'),
    decodeUs: us('decode'),
    verifyUs: us('verify'),
    recoverUs: us('recover'),
    otherUs: us('total') - steps,
  }
}

/** Paid swaps per second against bare recoveries per second in the same run, and where a paid swap's time goes. */
export async function runPaidSwap(options: PaidSwapOptions = {}): Promise<PaidSwapResult> {
  const rounds = options.rounds ?? 3
  const roundSec = options.roundSec ?? 3
  const sliceSec = options.sliceSec ?? 0.25
  const warmupSec = options.warmupSec ?? 1
  const breakdownCalls = options.breakdownCalls ?? 500
  const deps = await buildAppDeps(benchConfig())
  try {
    const resource = `${deps.publicUrl}${PAID_SWAP_PATHS[0]}`
    const requirements = paymentRequirementsFor(deps, resource)
    // Fixed keys, so every run pays from the same addresses (none of them sanctioned).
    const accounts = Array.from({ length: PAYERS }, (_, k) => privateKeyToAccount(keccak256(stringToHex(`swapeazi bench payer ${k}`))))

    let signedPayments = 0
    let signMs = 0
    const unused: SignedPayment[] = []
    /** Tops the unused payments up to `count`; signing is the client's cost, so it happens between timed phases. */
    const topUp = async (count: number): Promise<void> => {
      const missing = Math.ceil(count) - unused.length
      if (missing <= 0) return
      const start = now()
      unused.push(...(await signPayments(accounts, requirements, missing, signedPayments)))
      signMs += now() - start
      signedPayments += missing
    }

    // The baseline recovers over a fixed set of the same authorizations; payments signed for it are paid later.
    await topUp(1_000)
    const recoverPool = unused.slice()
    const warm = await recoverFor(recoverPool, warmupSec)
    // A paid swap does one recovery and more, so it cannot outrun the baseline: 1.5× its best rate is ample.
    let recoverBest = (warm.calls * 1_000) / warm.ms
    const paidNeed = (sec: number): number => recoverBest * sec * 1.5 + 100
    await topUp(paidNeed(warmupSec))
    const warmPaid = await payFor(deps, resource, unused, warmupSec)

    const results: PaidSwapRound[] = []
    for (let round = 0; round < rounds; round++) {
      await topUp(paidNeed(roundSec))
      const baseline: Phase = { calls: 0, ms: 0 }
      const paid: Phase = { calls: 0, ms: 0 }
      // Alternate slices until each side has had its round; a paid slice ends early only if the payments run out.
      while (baseline.ms < roundSec * 1_000 || paid.ms < roundSec * 1_000) {
        const b = await recoverFor(recoverPool, sliceSec)
        baseline.calls += b.calls
        baseline.ms += b.ms
        if (unused.length === 0) break
        const p = await payFor(deps, resource, unused, sliceSec)
        paid.calls += p.calls
        paid.ms += p.ms
      }
      const baselinePerSec = (baseline.calls * 1_000) / baseline.ms
      recoverBest = Math.max(recoverBest, baselinePerSec)
      results.push({
        baselinePerSec,
        baselineCalls: baseline.calls,
        paidPerSec: (paid.calls * 1_000) / paid.ms,
        paidCalls: paid.calls,
        paidSec: paid.ms / 1_000,
      })
    }
    const baselineBest = Math.max(...results.map((r) => r.baselinePerSec))
    const paidBest = Math.max(...results.map((r) => r.paidPerSec))

    await topUp(breakdownCalls)
    const breakdown = await breakDown(deps, resource, requirements, unused, breakdownCalls)

    // Every paid answer must stand for a settled payment and a recorded swap, and nothing else may be in the store.
    const paidTotal = warmPaid.calls + results.reduce((sum, r) => sum + r.paidCalls, 0) + breakdownCalls
    const [stored] = await deps.store.sql.query<{ settled: number; payments: number; swaps: number }>(
      `select (select count(*)::int from x402_payments where status = 'settled') as settled,
              (select count(*)::int from x402_payments) as payments, (select count(*)::int from swaps) as swaps`,
    )
    if (stored?.settled !== paidTotal || stored.payments !== paidTotal || stored.swaps !== paidTotal)
      throw new Error(
        `after ${paidTotal} paid swaps the store holds ${JSON.stringify(stored)}: settled payments, payments and swaps should each be ${paidTotal}`,
      )

    return {
      roundSec,
      sliceSec,
      warmupSec,
      signedPayments,
      signPerSec: (signedPayments * 1_000) / signMs,
      rounds: results,
      baselineBest,
      paidBest,
      ratio: paidBest / baselineBest,
      breakdown,
      store: deps.store.sql.describe,
    }
  } finally {
    await deps.store.sql.close()
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await runPaidSwap(), null, 2))
}
