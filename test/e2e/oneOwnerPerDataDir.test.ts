import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DataDirHolder } from '../../src/schemas/dataDirLock.ts'
import { DATA_DIR_LOCK_FILE } from '../../src/store/dataDirLock.ts'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import { openStore } from '../../src/store/openStore.ts'
import { quoteBody } from '../http/testApp.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { type CliRun, runCliInProcess } from '../support/runCliInProcess.ts'
import { type Replica, startReplica } from './replicaProcess.ts'

const run = promisify(execFile)
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const OBSERVATIONS = fileURLToPath(new URL('../intel/fixtures/observations.jsonl', import.meta.url))
const START_TIMEOUT_MS = 120_000
const TEST_TIMEOUT_MS = 120_000

// Issue 15 items 1 and 2: a PGlite data directory has one owner. Real `swapeazi serve` processes on one directory; the
// operator commands run in this process (runCliInProcess) and reach the live service through its operator socket.
describe('one owner per PGlite data directory', () => {
  const work = mkdtempSync(join(tmpdir(), 'swapeazi-owner-'))
  const dataDir = join(work, 'data')
  const env = {
    SWAPEAZI_DATA_DIR: dataDir,
    SWAPEAZI_PORT: '0',
    SWAPEAZI_HOST: '127.0.0.1',
    SWAPEAZI_KEY_SECRET: 'one-owner-key-secret-one-owner-key-secret',
    SWAPEAZI_LOG_LEVEL: 'info',
  }
  let first: Replica | undefined
  const issuedKeyIds: string[] = []
  const swapRefs: string[] = []
  let revokedId = ''

  const cli = (argv: string[]): Promise<CliRun> => runCliInProcess(argv, { ...env, SWAPEAZI_LOG_LEVEL: 'silent' })
  const holder = (): DataDirHolder => JSON.parse(readFileSync(join(dataDir, DATA_DIR_LOCK_FILE), 'utf8')) as DataDirHolder
  const service = (): Replica => {
    if (first === undefined) throw new Error('the first service did not start')
    return first
  }
  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${service().url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })

  beforeAll(async () => {
    // A migrated directory, as a service that ran before leaves it: the processes below start warm.
    await (await openPgliteSql(dataDir, { template: await migratedPgliteTemplate() })).close()
    first = await startReplica({ env })
  }, START_TIMEOUT_MS)

  afterAll(async () => {
    await first?.stop()
    rmSync(work, { recursive: true, force: true })
  }, TEST_TIMEOUT_MS)

  it(
    'names the holder in its lock file, with its operator socket (0600) and URL',
    async () => {
      expect(holder()).toMatchObject({
        pid: service().pid,
        command: 'swapeazi serve',
        socket: join(dataDir, 'operator.sock'),
        url: service().url,
      })
      const socket = statSync(join(dataDir, 'operator.sock'))
      expect({ isSocket: socket.isSocket(), mode: socket.mode & 0o777 }).toEqual({ isSocket: true, mode: 0o600 })
      expect(statSync(join(dataDir, DATA_DIR_LOCK_FILE)).mode & 0o777).toBe(0o600)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'refuses a second serve at once, with one line naming the holder and what to do, and an MCP server naming SWAPEAZI_BASE_URL too',
    async () => {
      const started = Date.now()
      const second = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
        cwd: REPO_ROOT,
        env: { ...env, PATH: process.env['PATH'] ?? '' },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      )
      expect(Date.now() - started).toBeLessThan(30_000)
      const { pid, startedAt } = holder()
      const refusal = `swapeazi: SWAPEAZI_DATA_DIR ${dataDir} is in use by swapeazi serve (pid ${pid}, since ${startedAt}), and an embedded store has one owner: stop that process, set SWAPEAZI_DATA_DIR to another directory, or use PostgreSQL (DATABASE_URL) to run several processes on one store`
      expect(second).toEqual({ code: 1, stderr: `${refusal}\n` })

      const mcp = await cli(['mcp'])
      expect(mcp).toEqual({
        code: 1,
        stdout: '',
        stderr: `${refusal.replace(', or use PostgreSQL', ', use PostgreSQL')}, or set SWAPEAZI_BASE_URL to the running service's URL (${service().url}) so the MCP server calls it\n`,
      })
      // With SWAPEAZI_BASE_URL and a wallet it would keep its daily budget here: refused too.
      const budgeted = await runCliInProcess(['mcp'], {
        ...env,
        SWAPEAZI_LOG_LEVEL: 'silent',
        SWAPEAZI_BASE_URL: service().url,
        SWAPEAZI_WALLET_PRIVATE_KEY: generatePrivateKey(),
      })
      expect(budgeted).toEqual({ code: 1, stdout: '', stderr: `${refusal}\n` })
      // Still the first's, and it still answers.
      expect(holder().pid).toBe(service().pid)
      expect((await fetch(`${service().url}/api/v1/health`)).status).toBe(200)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'runs keys issue, usage and intel import on the live service, printing what they print on a stopped one',
    async () => {
      const issued = await cli(['keys', 'issue', '--tier', 'pro'])
      expect(issued).toMatchObject({ code: 0, stderr: '' })
      const key = JSON.parse(issued.stdout) as { key: string; id: string; tier: string }
      expect(key).toMatchObject({ id: expect.stringMatching(/^key_[0-9a-f]{24}$/), tier: 'pro' })
      issuedKeyIds.push(key.id)

      // The service knows the key at once: two keyed swaps built under it, answered 200.
      for (const fromAmount of ['500', '600']) {
        const quote = await post('/api/x402/quote', quoteBody({ fromChain: 'BAS', toChain: 'POL', fromAmount }))
        expect(quote.status).toBe(200)
        const { quoteId } = (await quote.json()) as { quoteId: string }
        const swap = await post('/api/v1/swap', { quoteId }, { 'x-swapeazi-key': key.key })
        expect(swap.status).toBe(200)
        swapRefs.push(((await swap.json()) as { swapEaziRef: string }).swapEaziRef)
      }
      // Self-served keys, answered 201 by the service.
      for (let i = 0; i < 3; i++) {
        const response = await post('/api/v1/keys', {})
        expect(response.status).toBe(201)
        issuedKeyIds.push(((await response.json()) as { id: string }).id)
      }

      const usage = await cli(['keys', 'usage', key.id, '--month', '2026-11'])
      expect(usage).toEqual({
        code: 0,
        stdout: `${JSON.stringify({ month: '2026-11', keys: [{ id: key.id, intelligenceCalls: 0 }] })}\n`,
        stderr: '',
      })
      expect(await cli(['keys', 'usage', '--month', '2026-13'])).toMatchObject({
        code: 1,
        stderr: 'swapeazi: --month takes a calendar month as YYYY-MM, such as 2026-11; got "2026-13"\n',
      })

      const lines = readFileSync(OBSERVATIONS, 'utf8').trim().split('\n')
      const bad = join(work, 'bad.jsonl')
      writeFileSync(bad, `${lines[0]}\n${(lines[1] ?? '').replace('"amount":"2500"', '"amount":"2500.1234567"')}\n`)
      expect(await cli(['intel', 'import', bad])).toEqual({
        code: 1,
        stdout: '',
        stderr: 'swapeazi: line 2: amount has more than 6 fraction digits, the decimals of USDC; nothing was imported\n',
      })
      const imported = await cli(['intel', 'import', OBSERVATIONS])
      expect(imported).toEqual({
        code: 0,
        stdout: `${JSON.stringify({ file: OBSERVATIONS, lines: lines.length, imported: lines.length, skipped: 0 })}\n`,
        stderr: '',
      })
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'revokes a key on the live service: the request after `keys revoke` reports is refused 401',
    async () => {
      const key = JSON.parse((await cli(['keys', 'issue', '--tier', 'free'])).stdout) as { key: string; id: string }
      issuedKeyIds.push(key.id)
      const keyed = (): Promise<Response> => fetch(`${service().url}/api/v1/chains`, { headers: { 'x-swapeazi-key': key.key } })
      expect((await keyed()).status).toBe(200)

      const revoked = await cli(['keys', 'revoke', key.key])
      expect(revoked).toEqual({
        code: 0,
        stdout: `${JSON.stringify({ id: key.id, revoked: true, alreadyRevoked: false, wasIssued: true })}\n`,
        stderr: '',
      })
      revokedId = key.id
      const refused = await keyed()
      expect(refused.status).toBe(401)
      expect(await refused.json()).toMatchObject({ code: 'invalid_key', reason: 'revoked' })
      expect((await cli(['keys', 'revoke', key.id])).stdout).toBe(
        `${JSON.stringify({ id: key.id, revoked: true, alreadyRevoked: true, wasIssued: true })}\n`,
      )
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'loses nothing the service answered: once it stops, the store holds every key, swap, revocation and observation',
    async () => {
      await service().stop()
      const store = await openStore({ driver: 'pglite', dataDir })
      try {
        const keys = await store.sql.query<{ id: string }>('select id from api_keys')
        expect(keys.map((row) => row.id)).toEqual(expect.arrayContaining(issuedKeyIds))
        for (const ref of swapRefs) expect(await store.getSwap(ref)).toMatchObject({ channel: 'api_key', keyId: issuedKeyIds[0] })
        expect(await store.keys.isRevoked(revokedId)).toBe(true)
        const [observations] = await store.sql.query<{ count: number }>('select count(*)::int as count from observations')
        expect(observations?.count).toBe(readFileSync(OBSERVATIONS, 'utf8').trim().split('\n').length)
      } finally {
        await store.sql.close()
      }
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'takes over the lock of a service killed with SIGKILL: the next one starts, and operator commands reach it',
    async () => {
      const killed = await startReplica({ env })
      process.kill(killed.pid, 'SIGKILL')
      await killed.stop()
      expect(holder().pid).toBe(killed.pid)

      first = await startReplica({ env })
      expect(holder()).toMatchObject({ pid: first.pid, socket: join(dataDir, 'operator.sock') })
      const usage = await cli(['keys', 'usage', '--month', '2020-01'])
      expect(usage).toEqual({ code: 0, stdout: `${JSON.stringify({ month: '2020-01', keys: [] })}\n`, stderr: '' })
    },
    START_TIMEOUT_MS,
  )
})
