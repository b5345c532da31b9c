import { Hono } from 'hono'
import { encodePaymentReceipt } from '../payments/x402/paymentReceipt.ts'
import { QuoteParams } from '../schemas/quote.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { describeX402Resources } from '../service/describeX402Resources.ts'
import { payForSwap } from '../service/payForSwap.ts'
import { PAID_SWAP_PATHS } from '../service/paymentRequirementsFor.ts'
import { ServiceError } from '../service/serviceError.ts'
import { readJsonBody } from './readJsonBody.ts'
import { requestHeader } from './requestHeader.ts'

/**
 * POST /api/x402/swap and /api/mpp/swap (one handler, spec rule 3): the body is validated, the swap screened and
 * built before any 402; then the X-PAYMENT is verified and settled, and the answer carries X-PAYMENT-RESPONSE.
 * Also GET /.well-known/x402.json, the payment manifest of those endpoints (DESIGN 7.19).
 */
export function swapRoutes(deps: ServiceDeps, publicUrl: string): Hono {
  const app = new Hono()
  for (const path of PAID_SWAP_PATHS) {
    app.post(path, async (c) => {
      const params = await readJsonBody(c, QuoteParams)
      const paymentHeader = requestHeader(c, 'x-payment')
      const authorization = requestHeader(c, 'authorization')
      if (paymentHeader !== undefined && authorization !== undefined && /^payment\s/i.test(authorization))
        throw new ServiceError(
          'conflicting_payment',
          'Both X-PAYMENT and Authorization: Payment were sent; pay with one rail only. Nothing was charged.',
        )
      const outcome = await payForSwap(deps, { params, paymentHeader, resource: `${publicUrl}${path}`, channel: 'x402' })
      if (outcome.kind === 'payment_required') return c.json(outcome.challenge, 402)
      return c.json(outcome.result, 200, { 'X-PAYMENT-RESPONSE': encodePaymentReceipt(outcome.receipt) })
    })
  }
  app.get('/.well-known/x402.json', (c) => c.json(describeX402Resources(deps, publicUrl)))
  return app
}
