import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { verifyApiKey } from '../src/auth/apiKey.ts'
import { usagePeriod } from '../src/intel/usagePeriod.ts'
import { intelKeySubject } from '../src/intel/usageSubjects.ts'
import { openStore } from '../src/store/openStore.ts'
import { type CliRun, runCliInProcess } from './support/runCliInProcess.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'swapeazi-keys-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const SECRET = 'operator-key-secret-operator-key-secret'
/** `swapeazi keys ARGS` in-process, over the one data dir; resolves to the run when it exits 0, else rejects with the run. */
async function cli(args: string[], secret = SECRET): Promise<CliRun> {
  const run = await runCliInProcess(['keys', ...args], {
    SWAPEAZI_DATA_DIR: dataDir,
    SWAPEAZI_KEY_SECRET: secret,
    SWAPEAZI_LOG_LEVEL: 'silent',
  })
  if (run.code !== 0) throw Object.assign(new Error(`swapeazi keys ${args.join(' ')} exited ${run.code}`), run)
  return run
}

describe('swapeazi keys', () => {
  it('issues a pro key under the configured secret, then revokes it by key and by id', async () => {
    const issued = JSON.parse((await cli(['issue', '--tier', 'pro'])).stdout) as { key: string; id: string; tier: string }
    expect(issued.tier).toBe('pro')
    const verified = verifyApiKey(new TextEncoder().encode(SECRET), issued.key)
    expect(verified).toEqual({ ok: true, claims: expect.objectContaining({ id: issued.id, tier: 'pro' }) })
    expect(JSON.parse((await cli(['revoke', issued.key])).stdout)).toEqual({
      id: issued.id,
      revoked: true,
      alreadyRevoked: false,
      wasIssued: true,
    })
    expect(JSON.parse((await cli(['revoke', issued.id])).stdout)).toEqual({
      id: issued.id,
      revoked: true,
      alreadyRevoked: true,
      wasIssued: true,
    })
    // An id this store never issued (a typo): revoked all the same, and said so.
    const typo = 'key_000000000000000000000000'
    expect(JSON.parse((await cli(['revoke', typo])).stdout)).toEqual({
      id: typo,
      revoked: true,
      alreadyRevoked: false,
      wasIssued: false,
      note: `this store never issued ${typo}: check the id for a typo (it is on the denylist all the same, so a key signed with it elsewhere is refused too)`,
    })
  }, 120_000)

  it('refuses an unknown tier and a key from another secret, with a message', async () => {
    await expect(cli(['issue', '--tier', 'gold'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--tier must be one of free, pro'),
    })
    const foreign = JSON.parse((await cli(['issue'], 'another-secret-another-secret-another')).stdout) as { key: string }
    await expect(cli(['revoke', foreign.key])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('revoke it by its key_ id'),
    })
  }, 120_000)

  it("prints a month's metered intelligence calls per key, for every key or one key", async () => {
    const a = JSON.parse((await cli(['issue', '--tier', 'pro'])).stdout) as { key: string; id: string }
    const b = JSON.parse((await cli(['issue', '--tier', 'pro'])).stdout) as { key: string; id: string }
    const month = usagePeriod(Date.now()).period
    // Calls are metered by the intelligence endpoint; here they are counted straight into the same store.
    const store = await openStore({ driver: 'pglite', dataDir })
    try {
      for (let i = 0; i < 3; i++) await store.intel.countCall(intelKeySubject(a.id), month)
      await store.intel.countCall(intelKeySubject(b.id), month)
      await store.intel.countCall(intelKeySubject(b.id), '2020-01')
      await store.intel.countCall('intel:ip:0123', month)
    } finally {
      await store.sql.close()
    }
    const all = JSON.parse((await cli(['usage'])).stdout) as { month: string; keys: { id: string; intelligenceCalls: number }[] }
    expect(all.month).toBe(month)
    expect(all.keys).toEqual(
      expect.arrayContaining([
        { id: a.id, intelligenceCalls: 3 },
        { id: b.id, intelligenceCalls: 1 },
      ]),
    )
    expect(all.keys.every((key) => key.id.startsWith('key_'))).toBe(true)
    expect(JSON.parse((await cli(['usage', a.key])).stdout)).toEqual({ month, keys: [{ id: a.id, intelligenceCalls: 3 }] })
    expect(JSON.parse((await cli(['usage', b.id, '--month', '2020-01'])).stdout)).toEqual({
      month: '2020-01',
      keys: [{ id: b.id, intelligenceCalls: 1 }],
    })
    expect(JSON.parse((await cli(['usage', '--month', '2020-02'])).stdout)).toEqual({ month: '2020-02', keys: [] })
    await expect(cli(['usage', '--month', '2020-13'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--month takes a calendar month as YYYY-MM'),
    })
    await expect(cli(['usage', 'key_nothex'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('a key id looks like key_'),
    })
  }, 180_000)

  it('names SWAPEAZI_DATA_DIR and the problem when the data directory is a file or under /proc, at once', async () => {
    const file = join(dataDir, 'not-a-directory')
    writeFileSync(file, '')
    for (const [path, problem] of [
      [file, 'is a file, not a directory'],
      ['/proc/swapeazi-data', 'is under /proc, a virtual file system that cannot hold a database'],
    ] as const)
      expect(await runCliInProcess(['keys', 'usage'], { SWAPEAZI_DATA_DIR: path, SWAPEAZI_LOG_LEVEL: 'silent' })).toEqual({
        code: 1,
        stdout: '',
        stderr: `swapeazi: SWAPEAZI_DATA_DIR ${path} ${problem}; set SWAPEAZI_DATA_DIR to a writable directory on disk (it is created if missing)\n`,
      })
  })
})
