import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { checkRelayerBalances, LOW_BALANCE_RELAYS, RELAY_GAS_UNITS } from '../../src/lifecycle/relayerBalance.ts'

// The relayer key pays the destination gas of every delivery: a key that runs dry leaves swaps pending, so it is
// reported while it still has a few deliveries left.

const RELAYER = '0x00000000000000000000000000000000000000aa'

function captured(): { log: pino.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk))
      done()
    },
  })
  return {
    log: pino({ level: 'info' }, stream),
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

const chain = (balanceWei: bigint, maxFeePerGas: bigint, fails = false) => ({
  getBalance: async () => {
    if (fails) throw new Error('down')
    return balanceWei
  },
  estimateFeesPerGas: async () => ({ maxFeePerGas }),
})

describe('checkRelayerBalances', () => {
  it('warns per chain where the key pays for fewer than 20 deliveries at the fees now, and says how many', async () => {
    const gwei = 10n ** 9n
    const perRelay = RELAY_GAS_UNITS * gwei
    const { log, lines } = captured()
    const balances = await checkRelayerBalances(
      {
        POL: chain(perRelay * (LOW_BALANCE_RELAYS - 1n), gwei),
        BAS: chain(perRelay * LOW_BALANCE_RELAYS, gwei),
        ARB: chain(10n ** 18n, gwei, true),
      },
      RELAYER,
      log,
    )
    expect(balances.map((entry) => [entry.chain, entry.relaysLeft])).toEqual([
      ['POL', LOW_BALANCE_RELAYS - 1n],
      ['BAS', LOW_BALANCE_RELAYS],
    ])
    const warnings = lines().filter((line) => line['event'] === 'relayer_balance_low')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ chain: 'POL', relays_left: '19', relayer: RELAYER, level: 40 })
    expect(String(warnings[0]?.['msg'])).toContain('fund it there')
  })
})
