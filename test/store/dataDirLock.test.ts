import { execFile, execFileSync, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { createServer as createHttpServer } from 'node:http'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { DataDirHolder } from '../../src/schemas/dataDirLock.ts'
import { runCliInProcess } from '../support/runCliInProcess.ts'
import {
  acquireDataDirLock,
  DATA_DIR_LOCK_FILE,
  DataDirHeldError,
  DataDirLockLostError,
  findDataDirHolder,
  HEARTBEAT_STALE_MS,
  OPERATOR_SOCKET_FILE,
  pidNamespace,
} from '../../src/store/dataDirLock.ts'
import { DataDirOpenError, openPgliteSql } from '../../src/store/openPgliteSql.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

const run = promisify(execFile)

/** Root on Linux with the right to mount (a container may lack it): a read-only tmpfs can be made for a test. */
function canMountReadOnly(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false
  const probe = mkdtempSync(join(tmpdir(), 'swapeazi-mount-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro', 'tmpfs', probe], { stdio: 'ignore' })
    execFileSync('umount', [probe], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TAKE_LOCK = fileURLToPath(new URL('./fixtures/takeDataDirLock.ts', import.meta.url))

const work = mkdtempSync(join(tmpdir(), 'swapeazi-lock-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))
let dirs = 0
const freshDir = (): string => join(work, `dir${++dirs}`)

const lockFile = (dataDir: string): string => join(dataDir, DATA_DIR_LOCK_FILE)
const readHolder = (dataDir: string): DataDirHolder => JSON.parse(readFileSync(lockFile(dataDir), 'utf8')) as DataDirHolder

/** A lock file as another process would have left it. */
function plantLock(dataDir: string, fields: Partial<DataDirHolder>): void {
  mkdirSync(dataDir, { recursive: true })
  const holder: DataDirHolder = {
    pid: 999_999,
    startedAt: new Date().toISOString(),
    command: 'swapeazi serve',
    token: 'planted-token-planted-token',
    socket: null,
    url: null,
    ...fields,
  }
  writeFileSync(lockFile(dataDir), JSON.stringify(holder))
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''])
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid ?? 0
}

describe('the lock on a PGlite data directory', () => {
  it('is created with the directory (0700) and names this process; a second open in this process is refused; release frees it', async () => {
    const dataDir = join(freshDir(), 'nested', 'data')
    const lock = await acquireDataDirLock(dataDir, { command: 'swapeazi serve' })
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    expect(statSync(lockFile(dataDir)).mode & 0o777).toBe(0o600)
    expect(readHolder(dataDir)).toEqual({
      pid: process.pid,
      startedAt: expect.any(String),
      command: 'swapeazi serve',
      token: expect.stringMatching(/^[0-9a-f]{32}$/),
      socket: null,
      url: null,
      namespace: pidNamespace(),
    })
    // On Linux: the boot and pid namespace its pid belongs to.
    if (process.platform === 'linux') expect(readHolder(dataDir).namespace).toMatch(/^[0-9a-f-]{36}\/pid:\[\d+\]$/)
    await expect(acquireDataDirLock(dataDir)).rejects.toThrow(
      `SWAPEAZI_DATA_DIR ${dataDir} is already open in this process, and an embedded store has one owner: stop that process, set SWAPEAZI_DATA_DIR to another directory, or use PostgreSQL (DATABASE_URL) to run several processes on one store`,
    )
    expect((await findDataDirHolder(dataDir))?.pid).toBe(process.pid)
    lock.publish({ socket: '/run/op.sock', url: 'http://127.0.0.1:8402' })
    expect(readHolder(dataDir)).toMatchObject({ pid: process.pid, socket: '/run/op.sock', url: 'http://127.0.0.1:8402' })
    lock.release()
    lock.release()
    expect(() => statSync(lockFile(dataDir))).toThrow(/ENOENT/)
    expect(await findDataDirHolder(dataDir)).toBeUndefined()
    ;(await acquireDataDirLock(dataDir)).release()
  })

  it('refuses while a live holder answers on its operator socket, though its lock file was removed or overwritten by hand', async () => {
    const dataDir = freshDir()
    const held = await acquireDataDirLock(dataDir, { command: 'swapeazi serve' })
    // The holder's operator endpoint, as serve binds it in the data directory.
    const socket = join(dataDir, OPERATOR_SOCKET_FILE)
    const endpoint = createServer((connection) => connection.end())
    await new Promise<void>((resolve) => endpoint.listen(socket, resolve))
    try {
      for (const tamper of [() => rmSync(lockFile(dataDir)), () => writeFileSync(lockFile(dataDir), 'garbage')]) {
        tamper()
        // A garbage lock is taken for one being written at first, then for a stale one: either way, not free.
        const refusal = await acquireDataDirLock(dataDir).catch((error: unknown) => error)
        expect(refusal).toBeInstanceOf(DataDirLockLostError)
        expect((refusal as Error).message).toBe(
          `SWAPEAZI_DATA_DIR ${dataDir} is in use by a live process whose lock file (${DATA_DIR_LOCK_FILE}) was removed or overwritten: its operator socket ${socket} answers. An embedded store has one owner: stop that process (find it with \`fuser ${socket}\`) and start it again, set SWAPEAZI_DATA_DIR to another directory, or use PostgreSQL (DATABASE_URL) to run several processes on one store`,
        )
        // Nothing of the refused attempt is left behind.
        expect(() => readHolder(dataDir)).toThrow()
      }
    } finally {
      await new Promise((resolve) => endpoint.close(resolve))
      held.release()
    }
    // Once the holder is gone (its socket no longer answers), the directory is free again.
    ;(await acquireDataDirLock(dataDir)).release()
  })

  it('refuses at once while a live process holds it, naming its pid and what to do', async () => {
    const dataDir = freshDir()
    // The parent of this worker is alive and started before this lock was taken.
    plantLock(dataDir, { pid: process.ppid, startedAt: new Date().toISOString() })
    const started = Date.now()
    const refusal = await acquireDataDirLock(dataDir).catch((error: unknown) => error)
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(refusal).toBeInstanceOf(DataDirHeldError)
    expect((refusal as Error).message).toBe(
      `SWAPEAZI_DATA_DIR ${dataDir} is in use by swapeazi serve (pid ${process.ppid}, since ${readHolder(dataDir).startedAt}), and an embedded store has one owner: stop that process, set SWAPEAZI_DATA_DIR to another directory, or use PostgreSQL (DATABASE_URL) to run several processes on one store`,
    )
    expect(readHolder(dataDir).pid).toBe(process.ppid)
  })

  it('takes over a lock whose process is gone, one this pid left in an earlier life, and one never written', async () => {
    const dead = freshDir()
    plantLock(dead, { pid: await deadPid() })
    expect(await findDataDirHolder(dead)).toBeUndefined()
    const fromDead = await acquireDataDirLock(dead)
    expect(readHolder(dead).pid).toBe(process.pid)
    fromDead.release()

    // A container restarted with the same pids: the lock names this process, which does not hold it.
    const samePid = freshDir()
    plantLock(samePid, { pid: process.pid })
    ;(await acquireDataDirLock(samePid)).release()

    // Created, never written (killed between open and write), two minutes ago.
    const unwritten = freshDir()
    mkdirSync(unwritten)
    writeFileSync(lockFile(unwritten), '')
    const twoMinutesAgo = new Date(Date.now() - 120_000)
    utimesSync(lockFile(unwritten), twoMinutesAgo, twoMinutesAgo)
    ;(await acquireDataDirLock(unwritten)).release()
  })

  it.skipIf(process.platform !== 'linux')(
    'takes over a lock whose process has exited but is not yet reaped (a zombie, as after kill -9 under a parent that has not waited)',
    async () => {
      // The shell starts a child that exits at once, then becomes `sleep`, which never waits for it: a zombie for 5 s.
      const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 5'])
      const [line] = (await once(createInterface({ input: parent.stdout }), 'line')) as [string]
      const zombie = Number(line)
      try {
        let state = ''
        for (let tries = 0; tries < 100 && state !== 'Z'; tries += 1) {
          const stat = readFileSync(`/proc/${zombie}/stat`, 'utf8')
          state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
          if (state !== 'Z') await new Promise((resolve) => setTimeout(resolve, 20))
        }
        expect(state).toBe('Z')
        const dataDir = freshDir()
        plantLock(dataDir, { pid: zombie })
        expect(await findDataDirHolder(dataDir)).toBeUndefined()
        const lock = await acquireDataDirLock(dataDir)
        expect(readHolder(dataDir).pid).toBe(process.pid)
        lock.release()
      } finally {
        parent.kill()
      }
    },
  )

  it.skipIf(process.platform !== 'linux')(
    'takes over a lock whose pid now belongs to a process started after it (a reused pid)',
    async () => {
      const dataDir = freshDir()
      plantLock(dataDir, { pid: process.ppid, startedAt: '2001-01-01T00:00:00.000Z', socket: join(work, 'nothing-listens.sock') })
      const lock = await acquireDataDirLock(dataDir)
      expect(readHolder(dataDir).pid).toBe(process.pid)
      lock.release()
    },
  )

  // Review of issue 15: in another container on a shared volume both processes are often pid 1, so the pid checks
  // found the live holder stale (its pid "this process's", or not alive here) and two processes owned the directory.
  it.runIf(pidNamespace() !== null)(
    'goes by the heartbeat for a holder in another pid namespace: refused while refreshed or its socket answers, taken over once silent',
    async () => {
      const elsewhere = 'ffffffff-ffff-ffff-ffff-ffffffffffff/pid:[4026530000]'
      // Pid 1 here, and this process's own pid: neither says anything about a process in another namespace.
      for (const pid of [1, process.pid]) {
        const fresh = freshDir()
        plantLock(fresh, { pid, namespace: elsewhere })
        const refusal = await acquireDataDirLock(fresh).catch((error: unknown) => error)
        expect(refusal).toBeInstanceOf(DataDirHeldError)
        expect((refusal as Error).message).toContain(`pid ${pid} in another container or on another machine`)
        expect((refusal as Error).message).toContain(`a lock left ${HEARTBEAT_STALE_MS / 1000} s unrefreshed is taken over`)
        expect((await findDataDirHolder(fresh))?.pid).toBe(pid)
      }

      // Silent past the heartbeat's limit, but its operator socket answers: still live.
      const answering = freshDir()
      mkdirSync(answering, { recursive: true })
      const socketPath = join(answering, 'operator.sock')
      const listener = createServer((connection) => connection.end())
      await new Promise<void>((resolve) => listener.listen(socketPath, resolve))
      try {
        plantLock(answering, { pid: process.pid, namespace: elsewhere, socket: socketPath })
        const silentSince = new Date(Date.now() - HEARTBEAT_STALE_MS - 5_000)
        utimesSync(lockFile(answering), silentSince, silentSince)
        await expect(acquireDataDirLock(answering)).rejects.toBeInstanceOf(DataDirHeldError)
      } finally {
        await new Promise((resolve) => listener.close(resolve))
      }

      // Silent past the limit, its socket gone: the holder died (a container killed); the lock is taken over.
      const silent = freshDir()
      plantLock(silent, { pid: 1, namespace: elsewhere, socket: join(silent, 'operator.sock') })
      const longAgo = new Date(Date.now() - HEARTBEAT_STALE_MS - 5_000)
      utimesSync(lockFile(silent), longAgo, longAgo)
      expect(await findDataDirHolder(silent)).toBeUndefined()
      const taken = await acquireDataDirLock(silent)
      expect(readHolder(silent)).toMatchObject({ pid: process.pid, namespace: pidNamespace() })
      taken.release()

      // A lock written before the namespace was recorded is judged by its pid, as before: alive here, refused.
      const older = freshDir()
      plantLock(older, { pid: process.ppid })
      await expect(acquireDataDirLock(older)).rejects.toBeInstanceOf(DataDirHeldError)
    },
    30_000,
  )

  // Audit of issue 15: the heartbeat was dated by our clock alone.
  it.runIf(pidNamespace() !== null)(
    'watches the heartbeat of a holder in another pid namespace whose lock our clock dates old or in the future',
    async () => {
      const elsewhere = 'ffffffff-ffff-ffff-ffff-ffffffffffff/pid:[4026530000]'
      // Clocks that disagree (another host's, or a lock from before a reboot whose clock was set ahead): a holder
      // whose clock is an hour behind ours still beats, and is refused; a lock dated an hour ahead that nothing
      // touches any more is taken over, not held until our clock passes it.
      const behind = freshDir()
      plantLock(behind, { pid: 1, namespace: elsewhere })
      let skewed = Date.now() - 3_600_000
      utimesSync(lockFile(behind), new Date(skewed), new Date(skewed))
      const beating = setInterval(() => {
        skewed += 500
        utimesSync(lockFile(behind), new Date(skewed), new Date(skewed))
      }, 500)
      try {
        await expect(acquireDataDirLock(behind)).rejects.toBeInstanceOf(DataDirHeldError)
      } finally {
        clearInterval(beating)
      }
      const ahead = freshDir()
      plantLock(ahead, { pid: 1, namespace: elsewhere })
      const inAnHour = new Date(Date.now() + 3_600_000)
      utimesSync(lockFile(ahead), inAnHour, inAnHour)
      const takenAhead = await acquireDataDirLock(ahead)
      expect(readHolder(ahead)).toMatchObject({ pid: process.pid })
      takenAhead.release()
      // Released while watched: the directory is free, and taken, not refused as held by the holder that left.
      const released = freshDir()
      plantLock(released, { pid: 1, namespace: elsewhere })
      const hourAgo = new Date(Date.now() - 3_600_000)
      utimesSync(lockFile(released), hourAgo, hourAgo)
      setTimeout(() => unlinkSync(lockFile(released)), 500)
      const takenReleased = await acquireDataDirLock(released)
      expect(readHolder(released)).toMatchObject({ pid: process.pid })
      takenReleased.release()
    },
    30_000,
  )

  it('keeps its lock refreshed while held, and never writes over a lock that is no longer its own', async () => {
    const dataDir = freshDir()
    const lock = await acquireDataDirLock(dataDir)
    const longAgo = new Date(Date.now() - 60_000)
    utimesSync(lockFile(dataDir), longAgo, longAgo)
    for (let waited = 0; statSync(lockFile(dataDir)).mtimeMs < Date.now() - 30_000; waited += 100) {
      if (waited > 10_000) throw new Error('the lock was not refreshed within 10 s')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // Another lock in its place (it should never happen): publish leaves it alone, and so does release.
    plantLock(dataDir, { pid: process.ppid, token: 'another-token-another-token' })
    lock.publish({ socket: '/run/op.sock' })
    expect(readHolder(dataDir)).toMatchObject({ pid: process.ppid, token: 'another-token-another-token', socket: null })
    lock.release()
    expect(readHolder(dataDir).token).toBe('another-token-another-token')
  })

  it('says which of SWAPEAZI_DATA_DIR is wrong: a file, inside a file, under /proc', async () => {
    const file = join(work, 'a-file')
    writeFileSync(file, 'not a directory')
    await expect(acquireDataDirLock(file)).rejects.toThrow(
      `SWAPEAZI_DATA_DIR ${file} is a file, not a directory; set SWAPEAZI_DATA_DIR to a writable directory on disk (it is created if missing)`,
    )
    await expect(acquireDataDirLock(join(file, 'data'))).rejects.toThrow(
      `SWAPEAZI_DATA_DIR ${join(file, 'data')} is inside ${file}, which is a file;`,
    )
    // Node's recursive mkdir loops forever here; this answers at once.
    await expect(openPgliteSql('/proc/swapeazi-data')).rejects.toThrow(
      'SWAPEAZI_DATA_DIR /proc/swapeazi-data is under /proc, a virtual file system that cannot hold a database;',
    )
  })

  it('opens a data directory named through a symlink, and names SWAPEAZI_DATA_DIR when PGlite cannot open the store', async () => {
    const template = await migratedPgliteTemplate()
    const target = freshDir()
    const link = join(work, `link${dirs}`)
    mkdirSync(target, { mode: 0o700 })
    symlinkSync(target, link)
    const viaLink = await openPgliteSql(link, { template, thread: 'main' })
    await viaLink.query('create table through_link (v text)')
    await viaLink.query("insert into through_link values ('kept')")
    await viaLink.close()
    const direct = await openPgliteSql(target, { template, thread: 'main' })
    expect(await direct.query('select v from through_link')).toEqual([{ v: 'kept' }])
    await direct.close()
    // A store from another PostgreSQL: one line that names the variable and what to do, not PGlite's own words alone.
    writeFileSync(join(target, 'PG_VERSION'), '99\n')
    const refusal = await openPgliteSql(link, { template, thread: 'main' }).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(DataDirOpenError)
    expect((refusal as Error).message).toMatch(
      new RegExp(
        `^SWAPEAZI_DATA_DIR ${link} could not be opened as a PGlite store \\(.+\\): its files may be damaged, made by another PGlite version, or not all writable by this user \\(.+\\); repair that, or set SWAPEAZI_DATA_DIR to another directory`,
      ),
    )
    // The lock was released with the failure.
    expect(await findDataDirHolder(link)).toBeUndefined()
  })

  it.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
    'says so when the directory is not writable by the user the process runs as',
    async () => {
      // Root writes anywhere, so the check runs as nobody (65534) on a directory root owns, which nobody can enter.
      const dataDir = freshDir()
      mkdirSync(dataDir, { mode: 0o755 })
      chmodSync(work, 0o755)
      const { stdout } = await run(process.execPath, ['--import', 'tsx', TAKE_LOCK, dataDir, '0'], {
        cwd: REPO_ROOT,
        uid: 65534,
        gid: 65534,
        env: { PATH: process.env['PATH'] ?? '', TSX_DISABLE_CACHE: '1' },
      })
      expect(JSON.parse(stdout)).toMatchObject({
        taken: false,
        message: `SWAPEAZI_DATA_DIR ${dataDir} is owned by uid 0, not by this user (uid 65534): run SwapEazi as its owner, give it to this user (chown -R 65534 ${dataDir}), or set SWAPEAZI_DATA_DIR to another directory`,
      })
      // A directory to be made in one this user cannot write: the message names that one, where the fix is.
      const inside = join(dataDir, 'new', 'data')
      const created = await run(process.execPath, ['--import', 'tsx', TAKE_LOCK, inside, '0'], {
        cwd: REPO_ROOT,
        uid: 65534,
        gid: 65534,
        env: { PATH: process.env['PATH'] ?? '', TSX_DISABLE_CACHE: '1' },
      })
      expect(JSON.parse(created.stdout)).toMatchObject({
        taken: false,
        message: `SWAPEAZI_DATA_DIR ${inside} cannot be created: ${dataDir}, where it would be made, is not writable by this user; set SWAPEAZI_DATA_DIR to a writable directory on disk (it is created if missing)`,
      })
    },
    30_000,
  )

  it.skipIf(!canMountReadOnly())('says a read-only file system is read-only, not that its mode 777 directory needs chmod 700', async () => {
    const mountPoint = freshDir()
    mkdirSync(mountPoint)
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,mode=777', 'tmpfs', mountPoint])
    try {
      await expect(acquireDataDirLock(mountPoint)).rejects.toThrow(
        `SWAPEAZI_DATA_DIR ${mountPoint} is on a read-only file system; set SWAPEAZI_DATA_DIR to a writable directory on disk`,
      )
    } finally {
      execFileSync('umount', [mountPoint])
    }
  })

  // Review of issue 15: another user who made the data directory (`./data` run from /tmp, say), or can write in it,
  // planted a lock naming a live pid and an operator socket of their own, and `keys revoke` sent them the key.
  it.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
    'refuses a data directory another user owns, or others can write in, before trusting a lock or socket in it',
    async () => {
      const dataDir = freshDir()
      mkdirSync(dataDir, { mode: 0o700 })
      chmodSync(dataDir, 0o777)
      const socket = join(dataDir, 'operator.sock')
      const received: string[] = []
      const planted = createHttpServer((request, response) => {
        let body = ''
        request.on('data', (chunk: Buffer) => {
          body += chunk.toString()
        })
        request.on('end', () => {
          received.push(`${request.url} ${body}`)
          response.writeHead(200, { 'content-type': 'application/json' })
          response.end(JSON.stringify({ id: 'key_000000000000000000000000', revoked: true, alreadyRevoked: false }))
        })
      })
      await new Promise<void>((resolve) => planted.listen(socket, resolve))
      try {
        plantLock(dataDir, { pid: 1, socket })
        const secret = 'se_THE_OPERATORS_REAL_KEY_0123456789'
        const env = { SWAPEAZI_DATA_DIR: dataDir, SWAPEAZI_LOG_LEVEL: 'silent', SWAPEAZI_KEY_SECRET: 'k'.repeat(64) }
        // Writable by others (mode 0777): refused, whoever owns it.
        const writable = await runCliInProcess(['keys', 'revoke', secret], env)
        expect(writable.code).not.toBe(0)
        expect(writable.stderr).toContain(
          `SWAPEAZI_DATA_DIR ${dataDir} is writable by other users (mode 777), who could plant files in it: chmod 700 ${dataDir}, or set SWAPEAZI_DATA_DIR to another directory\n`,
        )
        // Owned by another user (65534), as are its lock and socket: refused.
        chmodSync(dataDir, 0o700)
        for (const path of [dataDir, lockFile(dataDir), socket]) chownSync(path, 65534, 65534)
        const foreign = await runCliInProcess(['keys', 'revoke', secret], env)
        expect(foreign.code).not.toBe(0)
        expect(foreign.stderr).toContain(`SWAPEAZI_DATA_DIR ${dataDir} is owned by uid 65534, not by this user (uid 0)`)
        await expect(acquireDataDirLock(dataDir)).rejects.toThrow('is owned by uid 65534, not by this user (uid 0)')
        expect(received).toEqual([])
      } finally {
        await new Promise((resolve) => planted.close(resolve))
      }
    },
    30_000,
  )

  it('takes a stale lock over past a takeover mutex an earlier process with this pid left, but not past a live one', async () => {
    const dataDir = freshDir()
    plantLock(dataDir, { pid: await deadPid() })
    const mutex = join(dataDir, 'swapeazi.lock.takeover')
    writeFileSync(mutex, JSON.stringify({ pid: process.ppid, token: 'live-taker' }))
    // A live process is taking the stale lock over: this one waits for it, and gives up after its attempts.
    await expect(acquireDataDirLock(dataDir, { command: 'swapeazi serve' })).rejects.toThrow('could not be taken over')
    // One naming this very pid was left by an earlier process with the same pid (a restarted container).
    writeFileSync(mutex, JSON.stringify({ pid: process.pid, token: 'earlier-process' }))
    const lock = await acquireDataDirLock(dataDir, { command: 'swapeazi serve' })
    expect(readHolder(dataDir).pid).toBe(process.pid)
    expect(existsSync(mutex)).toBe(false)
    lock.release()
  }, 30_000)

  it('lets exactly one of several processes racing for a stale lock take it; the others name the winner', async () => {
    const dataDir = freshDir()
    plantLock(dataDir, { pid: await deadPid() })
    // Each waits for the same instant, so that they really race; the winner holds the lock until all have tried.
    const startAt = Date.now() + 2_000
    const racers = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ['--import', 'tsx', TAKE_LOCK, dataDir, String(startAt)], { cwd: REPO_ROOT }),
    )
    const outcomes = await Promise.all(
      racers.map(async (racer) => {
        const [line] = (await once(createInterface({ input: racer.stdout }), 'line')) as [string]
        return JSON.parse(line) as { taken: boolean; pid: number; message?: string }
      }),
    )
    for (const racer of racers) racer.stdin.end()
    await Promise.all(racers.map((racer) => (racer.exitCode === null ? once(racer, 'exit') : undefined)))
    const winners = outcomes.filter((outcome) => outcome.taken)
    expect(winners).toHaveLength(1)
    for (const loser of outcomes.filter((outcome) => !outcome.taken))
      expect(loser.message).toContain(`is in use by takeDataDirLock (pid ${winners[0]?.pid},`)
    expect(await findDataDirHolder(dataDir)).toBeUndefined()
  }, 30_000)

  it('an MCP server on a directory a process without HTTP holds (swapeazi track) is not told to call it over SWAPEAZI_BASE_URL', async () => {
    const dataDir = freshDir()
    plantLock(dataDir, { pid: process.ppid, command: 'swapeazi track' })
    const run = await runCliInProcess(['mcp'], { SWAPEAZI_DATA_DIR: dataDir, SWAPEAZI_LOG_LEVEL: 'silent' })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/is in use by swapeazi track \(pid \d+/)
    expect(run.stderr).not.toContain('SWAPEAZI_BASE_URL')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    // A serve holding it is named with SWAPEAZI_BASE_URL, as before.
    const served = freshDir()
    plantLock(served, { pid: process.ppid, command: 'swapeazi serve', url: 'http://127.0.0.1:8402' })
    expect((await runCliInProcess(['mcp'], { SWAPEAZI_DATA_DIR: served, SWAPEAZI_LOG_LEVEL: 'silent' })).stderr).toContain(
      "set SWAPEAZI_BASE_URL to the running service's URL (http://127.0.0.1:8402)",
    )
  })

  it('a tracker on a directory a serve holds is told the service tracks already', async () => {
    const served = freshDir()
    plantLock(served, { pid: process.ppid, command: 'swapeazi serve', url: 'http://127.0.0.1:8402' })
    const run = await runCliInProcess(['track'], {
      SWAPEAZI_DATA_DIR: served,
      SWAPEAZI_LOG_LEVEL: 'silent',
      SWAPEAZI_RPC_URLS: '{"BAS":"http://127.0.0.1:1"}',
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/is in use by swapeazi serve \(pid \d+/)
    expect(run.stderr).toContain(
      'or leave the tracking to it: swapeazi serve runs this tracker itself (unless SWAPEAZI_TRACKER=off), and a tracker has no client mode over SWAPEAZI_BASE_URL',
    )
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
  }, 30_000)
})
