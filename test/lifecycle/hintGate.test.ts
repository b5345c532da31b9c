import { describe, expect, it } from 'vitest'
import { createHintGate } from '../../src/lifecycle/hintGate.ts'
import type { HintSourceTransactionReturnType } from '../../src/lifecycle/hintSourceTransaction.ts'

// The public hint endpoint's RPC cost, bounded (review of issue 15, defect 8): a refused hint is answered from memory
// for a while, identical hints in flight share one check, and only so many checks run at once.

const hash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`
const notFound: HintSourceTransactionReturnType = { ok: false, reason: 'transaction_not_found', detail: 'not mined' }
const notThis: HintSourceTransactionReturnType = { ok: false, reason: 'not_this_swap', detail: 'another swap' }

describe('the hint gate', () => {
  it('answers a refused hint from memory (not mined: 5 s; not this swap: 60 s), and checks again after', async () => {
    let now = 0
    const calls: string[] = []
    const gate = createHintGate(
      async (_ref, txHash) => {
        calls.push(txHash)
        return txHash === hash(1) ? notFound : notThis
      },
      { clock: () => now },
    )
    for (let k = 0; k < 20; k++) expect(await gate('swp_A', hash(1))).toEqual(notFound)
    expect(await gate('swp_A', hash(2))).toEqual(notThis)
    expect(calls).toEqual([hash(1), hash(2)])
    now = 5_001
    await gate('swp_A', hash(1))
    await gate('swp_A', hash(2))
    expect(calls).toEqual([hash(1), hash(2), hash(1)])
    now = 60_001
    await gate('swp_A', hash(2).toUpperCase().replace('0X', '0x'))
    expect(calls).toHaveLength(4)
  })

  it('never remembers a success or an RPC failure, shares one check among identical hints, and caps checks in flight', async () => {
    const calls: string[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const gate = createHintGate(
      async (ref, txHash) => {
        calls.push(`${ref}|${txHash}`)
        await held
        return ref === 'swp_OK' ? { ok: true, isFinal: true, records: [] } : { ok: false, reason: 'rpc_unavailable', detail: 'down' }
      },
      { maxInFlight: 2 },
    )
    const same = [gate('swp_OK', hash(1)), gate('swp_OK', hash(1))]
    const other = gate('swp_DOWN', hash(2))
    // A third distinct check while two run: refused at once, without calling the chain.
    expect(await gate('swp_X', hash(3))).toMatchObject({ ok: false, reason: 'busy' })
    release()
    expect(await Promise.all(same)).toEqual([
      { ok: true, isFinal: true, records: [] },
      { ok: true, isFinal: true, records: [] },
    ])
    expect(await other).toMatchObject({ reason: 'rpc_unavailable' })
    expect(calls).toEqual([`swp_OK|${hash(1)}`, `swp_DOWN|${hash(2)}`])
    await gate('swp_OK', hash(1))
    await gate('swp_DOWN', hash(2))
    expect(calls).toHaveLength(4)
  })
})
