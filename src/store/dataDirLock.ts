import { randomBytes } from 'node:crypto'
import {
  accessSync,
  closeSync,
  constants,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { connect } from 'node:net'
import { basename, dirname, join } from 'node:path'
import { DataDirHolder } from '../schemas/dataDirLock.ts'

// One owner per PGlite data directory (DESIGN 9, issue 15 item 1). PGlite takes no lock of its own: two processes on
// one directory each run a database over the same files and lose each other's writes. The owner holds a lock file,
// created with O_EXCL, naming its pid; a second process refuses to open the directory while that pid lives.
//
// A lock is stale, and is taken over, when:
// - its pid is not alive (the holder was killed: kill -9, a crash, a power cut), or, on Linux, is a zombie: exited,
//   not yet reaped by its parent;
// - its pid is this process's and this process does not hold it (a container restarted with the same pids);
// - on Linux, the process with its pid started after the lock was taken (the pid was reused), unless the holder's
//   operator socket still answers (a wall clock stepped forward under a live holder).
// A live pid whose process started before the lock, or whose start is unknown (no /proc), holds it: taking a live
// store over loses writes, so when in doubt we refuse and name the pid.
//
// Those pid checks hold only where the holder's pid means the same process: the same boot of the same machine and
// the same pid namespace, which the lock records (`namespace`). A holder elsewhere (another container on a shared
// volume, where both may be pid 1; another host on a network file system) proves it lives by a heartbeat instead:
// it touches the lock file every HEARTBEAT_MS. Its lock is live while touched in the last HEARTBEAT_STALE_MS by our
// clock; otherwise (old, or dated in the future: the clocks of two hosts, or of two boots, disagree) it is watched for
// HEARTBEAT_WATCH_MS, and it is stale only if nothing touched it meanwhile and its operator socket, if it published
// one, does not answer.
//
// Takeover races: only the holder of a second file, the takeover mutex (created with O_EXCL, naming its pid), removes
// a stale lock, after reading it again under the mutex, and then tries O_EXCL itself. Nothing else removes a lock but
// its live owner, so a lock file is never removed under a process that has just taken it: racers that find the lock
// stale wait for the mutex, and a process that finds no lock at all may take it with O_EXCL meanwhile, which the
// mutex holder's own O_EXCL then sees. (Renaming the stale lock aside instead, as before, let a third process's O_EXCL
// slip in while a second had moved a fresh lock aside by mistake: two owners.) A mutex whose pid is not alive, or
// that stays unwritten, is moved aside by rename, checked, and removed.

/** The lock file's name inside the data directory. */
export const DATA_DIR_LOCK_FILE = 'swapeazi.lock'
/** The takeover mutex's name inside the data directory: held while a stale lock is removed and retaken. */
const TAKEOVER_FILE = 'swapeazi.lock.takeover'

/** How long a lock file may stay unreadable (created, not yet written) before it counts as stale. */
const UNWRITTEN_LOCK_MS = 2_000
/** Slack between a process's start time as /proc reports it (whole seconds of boot time) and the wall clock. */
const START_TIME_SLACK_MS = 2_000
/** A takeover mutex older than this was left by a process that died mid-takeover (a takeover takes milliseconds). */
const MUTEX_STALE_MS = 10_000
/** A socket that neither accepts nor refuses within this is a busy holder, not a dead one. */
const SOCKET_PROBE_MS = 1_000
const MAX_ATTEMPTS = 200
/** How often a holder touches its lock file, for processes in other pid namespaces that cannot check its pid. */
const HEARTBEAT_MS = 2_000
/** A lock from another pid namespace untouched this long was left by a holder that died (five heartbeats missed). */
export const HEARTBEAT_STALE_MS = 10_000
/**
 * How long a lock from another pid namespace that our clock dates outside the last HEARTBEAT_STALE_MS (old, or in the
 * future) is watched for a heartbeat before it counts as stale: two and a half beats.
 */
export const HEARTBEAT_WATCH_MS = 5_000
const HEARTBEAT_WATCH_POLL_MS = 200

/**
 * Where this process's pid means something: `<boot id>/<pid namespace>` from Linux's /proc, or null where either
 * cannot be read (another system, or a restricted /proc), when the lock's pid is all there is to go by.
 */
export function pidNamespace(): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const namespace = readlinkSync('/proc/self/ns/pid')
    return boot === '' ? null : `${boot}/${namespace}`
  } catch {
    return null
  }
}

/**
 * The locks this process holds, by lock file, with their tokens. Process-wide on purpose: a lock belongs to the
 * process, and a lock that names this pid but is not here was left by an earlier process with the same pid.
 */
const heldHere = new Map<string, string>()

/** The hold of this process on a data directory; `release` gives it up (openPgliteSql's close does). */
export type DataDirLock = {
  dataDir: string
  /** The lock file's content as this process last wrote it. */
  holder(): DataDirHolder
  /** The stale lock this one took over, when there was one that could be read: what its holder may have left. */
  previous: DataDirHolder | undefined
  /** Records where the holder's operator endpoint and HTTP API listen, for the processes that find the lock. */
  publish(fields: Partial<Pick<DataDirHolder, 'socket' | 'url'>>): void
  /** Removes the lock file if it is still this lock's. Idempotent. */
  release(): void
}

/** A second process on a data directory another live process holds (or a second open in this process). */
export class DataDirHeldError extends Error {
  override name = 'DataDirHeldError'
  /** `alternative`: one more way out, last in the list (`swapeazi mcp`: call the holder over SWAPEAZI_BASE_URL). */
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder,
    alternative?: string,
  ) {
    const here = pidNamespace()
    const isElsewhere = holder.namespace !== undefined && holder.namespace !== null && here !== null && holder.namespace !== here
    const who = isElsewhere
      ? `is in use by ${holder.command} (pid ${holder.pid} in another container or on another machine, since ${holder.startedAt}; it keeps its lock refreshed, and a lock left ${HEARTBEAT_STALE_MS / 1000} s unrefreshed is taken over)`
      : holder.pid === process.pid
        ? 'is already open in this process'
        : `is in use by ${holder.command} (pid ${holder.pid}, since ${holder.startedAt})`
    const ways = [
      'stop that process',
      'set SWAPEAZI_DATA_DIR to another directory',
      'use PostgreSQL (DATABASE_URL) to run several processes on one store',
    ]
    if (alternative !== undefined) ways.push(alternative)
    super(`SWAPEAZI_DATA_DIR ${dataDir} ${who}, and an embedded store has one owner: ${ways.slice(0, -1).join(', ')}, or ${ways.at(-1)}`)
  }
}

/**
 * A data directory path that cannot hold a database: a file, not writable, under /proc. `remedy`: what fixes this
 * directory where something does (a chmod, a chown), said first, with another directory as the other way out.
 */
export class DataDirUnusableError extends Error {
  override name = 'DataDirUnusableError'
  constructor(
    readonly dataDir: string,
    readonly problem: string,
    remedy?: string,
  ) {
    super(
      remedy === undefined
        ? `SWAPEAZI_DATA_DIR ${dataDir} ${problem}; set SWAPEAZI_DATA_DIR to a writable directory on disk (it is created if missing)`
        : `SWAPEAZI_DATA_DIR ${dataDir} ${problem}: ${remedy}, or set SWAPEAZI_DATA_DIR to another directory`,
    )
  }
}

/** The holder's operator socket in the data directory (src/app/startOperatorEndpoint.ts binds it). */
export const OPERATOR_SOCKET_FILE = 'operator.sock'

/**
 * A live process serves the data directory though its lock file was removed or overwritten (by hand: the holders
 * themselves never do): taking the directory would make two owners, so it is refused, as a held directory is.
 */
export class DataDirLockLostError extends Error {
  override name = 'DataDirLockLostError'
  constructor(
    readonly dataDir: string,
    socket: string,
  ) {
    super(
      `SWAPEAZI_DATA_DIR ${dataDir} is in use by a live process whose lock file (${DATA_DIR_LOCK_FILE}) was removed or overwritten: its operator socket ${socket} answers. An embedded store has one owner: stop that process (find it with \`fuser ${socket}\`) and start it again, set SWAPEAZI_DATA_DIR to another directory, or use PostgreSQL (DATABASE_URL) to run several processes on one store`,
    )
  }
}

/**
 * Takes the lock on `dataDir` for this process, creating the directory (mode 0700) if it is missing: throws
 * DataDirHeldError naming the holder when another live process holds it, DataDirUnusableError when the path cannot
 * hold a database. A stale lock is taken over (see above).
 */
export async function acquireDataDirLock(dataDir: string, options: { command?: string } = {}): Promise<DataDirLock> {
  try {
    return await acquireLock(dataDir, options)
  } catch (error) {
    // What the file system refused on the way (a takeover's mutex on a read-only mount, say), named as the rest are.
    const code = codeOf(error)
    if (code === undefined || error instanceof DataDirHeldError || error instanceof DataDirUnusableError) throw error
    if (code === 'EROFS') throw new DataDirUnusableError(dataDir, 'is on a read-only file system')
    if (code === 'EACCES' || code === 'EPERM') throw new DataDirUnusableError(dataDir, 'is not writable by this user')
    throw new DataDirUnusableError(dataDir, `cannot be locked (${code})`)
  }
}

async function acquireLock(dataDir: string, options: { command?: string }): Promise<DataDirLock> {
  prepareDataDir(dataDir)
  const path = join(dataDir, DATA_DIR_LOCK_FILE)
  let holder: DataDirHolder = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    command: options.command ?? commandOfThisProcess(),
    token: randomBytes(16).toString('hex'),
    socket: null,
    url: null,
    namespace: pidNamespace(),
  }
  let previous: DataDirHolder | undefined
  for (let attempt = 0; !createExclusive(dataDir, path, holder); attempt++) {
    if (attempt === MAX_ATTEMPTS)
      throw new DataDirUnusableError(dataDir, `has a lock file (${path}, or ${TAKEOVER_FILE} beside it) that could not be taken over`)
    const found = await inspectLock(path)
    if (found.state === 'live') throw new DataDirHeldError(dataDir, found.holder)
    if (found.state === 'stale' && takeOver(dataDir, path, found, holder)) {
      previous = parseHolder(found.raw)
      break
    }
    if (found.state === 'unwritten' || found.state === 'stale') await new Promise((resolve) => setTimeout(resolve, 20))
  }
  // A holder whose lock was removed or overwritten by hand still answers on its socket: the directory is not free.
  const socket = join(dataDir, OPERATOR_SOCKET_FILE)
  if (await socketAnswers(socket)) {
    removeIfOurs(path, holder.token)
    throw new DataDirLockLostError(dataDir, socket)
  }
  heldHere.set(path, holder.token)
  installExitHook()
  // Touched while held (and the file on disk is still this lock), so processes elsewhere see the holder alive.
  const heartbeat = setInterval(() => {
    if (heldHere.get(path) !== holder.token || !isOurs(path, holder.token)) {
      clearInterval(heartbeat)
      return
    }
    try {
      const now = new Date()
      utimesSync(path, now, now)
    } catch {}
  }, HEARTBEAT_MS)
  heartbeat.unref()
  return {
    dataDir,
    holder: () => holder,
    previous,
    publish(fields) {
      // Never over a lock that is no longer this one on disk (taken over by mistake): that would make two owners.
      if (heldHere.get(path) !== holder.token || !isOurs(path, holder.token)) return
      holder = { ...holder, ...fields }
      // Written aside and renamed over the lock: a reader sees the old content or the new, never half of either.
      // Named at random, not by the token: a directory listing must not show it.
      const aside = `${path}.${randomBytes(8).toString('hex')}.tmp`
      writeFileSync(aside, JSON.stringify(holder), { mode: 0o600 })
      renameSync(aside, path)
    },
    release() {
      clearInterval(heartbeat)
      if (heldHere.get(path) !== holder.token) return
      heldHere.delete(path)
      removeIfOurs(path, holder.token)
    },
  }
}

/**
 * The live process holding `dataDir`, or undefined when none does (no lock, or a stale one, which is left for the
 * next owner to take over). Creates nothing.
 */
export async function findDataDirHolder(dataDir: string): Promise<DataDirHolder | undefined> {
  checkDataDirOwner(dataDir)
  const path = join(dataDir, DATA_DIR_LOCK_FILE)
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const found = await inspectLock(path)
    if (found.state === 'live') return found.holder
    if (found.state !== 'unwritten') return undefined
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return undefined
}

type Inspection =
  | { state: 'live'; holder: DataDirHolder }
  /** `ino`: the lock file's inode when read, which a takeover checks is still the one there. */
  | { state: 'stale'; raw: string; ino: number }
  | { state: 'gone' }
  /** Created by a process that has not written it yet. */
  | { state: 'unwritten' }

async function inspectLock(path: string): Promise<Inspection> {
  let raw: string
  let modifiedMs: number
  let ino: number
  try {
    const before = statSync(path)
    raw = readFileSync(path, 'utf8')
    const after = statSync(path)
    // Replaced (renamed over by publish) between the two looks: read again.
    if (after.ino !== before.ino) return { state: 'unwritten' }
    modifiedMs = after.mtimeMs
    ino = after.ino
  } catch (error) {
    // ENOTDIR: the data directory is a file, which opening it reports.
    if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return { state: 'gone' }
    throw new DataDirUnusableError(dirname(path), `has a lock file (${path}) this user cannot read (${codeOf(error)})`)
  }
  const holder = parseHolder(raw)
  if (holder === undefined) return Date.now() - modifiedMs < UNWRITTEN_LOCK_MS ? { state: 'unwritten' } : { state: 'stale', raw, ino }
  return (await isHolderAlive(path, holder, modifiedMs)) ? { state: 'live', holder } : { state: 'stale', raw, ino }
}

function parseHolder(raw: string): DataDirHolder | undefined {
  try {
    const parsed = DataDirHolder.safeParse(JSON.parse(raw))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

async function isHolderAlive(path: string, holder: DataDirHolder, modifiedMs: number): Promise<boolean> {
  const here = pidNamespace()
  if (holder.namespace !== undefined && holder.namespace !== null && here !== null && holder.namespace !== here) {
    // Elsewhere: its pid names no process of ours. Alive while it keeps the lock touched, or its socket answers.
    // Touched recently by our clock: alive. Otherwise the clocks may disagree (another host's, ahead or behind: a
    // lock dated in the future stayed "alive" until our clock passed it, one from a host whose clock is behind looked
    // silent under a live holder), so whether the heartbeat still beats is watched for a few of its beats instead.
    const age = Date.now() - modifiedMs
    if (age >= -START_TIME_SLACK_MS && age < HEARTBEAT_STALE_MS) return true
    const watched = await watchHeartbeat(path, modifiedMs, HEARTBEAT_WATCH_MS)
    // Gone: its holder released it meanwhile (the directory is free: the caller tries to take it).
    if (watched !== 'silent') return watched === 'touched'
    return holder.socket !== null && (await socketAnswers(holder.socket))
  }
  if (holder.pid === process.pid) return heldHere.get(path) === holder.token
  if (!isPidAlive(holder.pid)) return false
  const startedMs = processStartMs(holder.pid)
  if (startedMs === undefined || startedMs <= Date.parse(holder.startedAt) + START_TIME_SLACK_MS) return true
  return holder.socket !== null && (await socketAnswers(holder.socket))
}

/**
 * Whether the lock file is touched (or replaced) within `watchMs` of finding it modified at `modifiedMs`, a heartbeat
 * seen beating whatever the clock that dates it; `gone` when it was removed meanwhile (released); else `silent`.
 */
async function watchHeartbeat(path: string, modifiedMs: number, watchMs: number): Promise<'touched' | 'gone' | 'silent'> {
  const until = Date.now() + watchMs
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_WATCH_POLL_MS))
    try {
      if (statSync(path).mtimeMs !== modifiedMs) return 'touched'
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return 'gone'
      return 'touched'
    }
  }
  return 'silent'
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists, under another user (and may be a zombie all the same).
    if (codeOf(error) !== 'EPERM') return false
  }
  return !isZombie(pid)
}

/**
 * Whether, on Linux, the pid is a process that has exited and not yet been reaped (state Z or X in /proc/PID/stat):
 * signal 0 still reaches it, but it runs nothing and holds no file, as after a kill -9 whose parent (a supervisor, or
 * a container's PID 1 that reaps nothing) has not waited for it. False where /proc cannot tell.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state === 'Z' || state === 'X'
  } catch {
    return false
  }
}

/**
 * When a process started, in milliseconds since the epoch, from Linux's /proc (field 22 of /proc/PID/stat, in clock
 * ticks of 1/100 s since boot, plus the boot time); undefined elsewhere.
 */
function processStartMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may hold spaces; field 3 starts two characters after it.
    const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
    const bootSec = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1])
    return Number.isFinite(startTicks) && Number.isFinite(bootSec) ? bootSec * 1000 + startTicks * 10 : undefined
  } catch {
    return undefined
  }
}

function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath })
    const done = (answers: boolean): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve(answers)
    }
    const timer = setTimeout(() => done(true), SOCKET_PROBE_MS)
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** Creates the lock file with O_EXCL: false when one exists. */
function createExclusive(dataDir: string, path: string, holder: DataDirHolder): boolean {
  try {
    writeFileExclusive(path, holder)
    return true
  } catch (error) {
    const code = codeOf(error)
    if (code === 'EEXIST') return false
    if (code === 'EACCES' || code === 'EPERM') throw new DataDirUnusableError(dataDir, 'is not writable by this user')
    if (code === 'EROFS') throw new DataDirUnusableError(dataDir, 'is on a read-only file system')
    throw new DataDirUnusableError(dataDir, `cannot hold a lock file (${code ?? String(error)})`)
  }
}

function writeFileExclusive(path: string, holder: DataDirHolder): void {
  const fd = openSync(path, 'wx', 0o600)
  try {
    writeSync(fd, JSON.stringify(holder))
  } catch (error) {
    closeSync(fd)
    unlinkSync(path)
    throw error
  }
  closeSync(fd)
}

/**
 * Under the takeover mutex: removes the lock if it is still the file found stale (its inode and content) and takes it
 * for `holder` with O_EXCL. True when taken; false when the mutex is another's, the lock changed, or another process
 * took it first (the caller inspects again).
 */
function takeOver(dataDir: string, path: string, stale: { raw: string; ino: number }, holder: DataDirHolder): boolean {
  const mutex = join(dataDir, TAKEOVER_FILE)
  const mine = JSON.stringify({ pid: process.pid, token: holder.token })
  try {
    const fd = openSync(mutex, 'wx', 0o600)
    try {
      writeSync(fd, mine)
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error
    clearStaleMutex(mutex)
    return false
  }
  try {
    let isStill: boolean
    try {
      isStill = statSync(path).ino === stale.ino && readFileSync(path, 'utf8') === stale.raw
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') throw error
      isStill = false
    }
    // Still the stale file: only the mutex's holder removes it. Gone: its owner released it, or a takeover before
    // ours ended; O_EXCL decides.
    if (isStill) unlinkSync(path)
    return createExclusive(dataDir, path, holder)
  } finally {
    try {
      if (readFileSync(mutex, 'utf8') === mine) unlinkSync(mutex)
    } catch {}
  }
}

/** A takeover mutex left by a process that died holding it (or never wrote it) is moved aside, checked and removed. */
function clearStaleMutex(mutex: string): void {
  let raw: string
  let modifiedMs: number
  try {
    raw = readFileSync(mutex, 'utf8')
    modifiedMs = statSync(mutex).mtimeMs
  } catch {
    return
  }
  let pid: number | undefined
  try {
    const parsed = JSON.parse(raw) as { pid?: unknown }
    if (typeof parsed.pid === 'number') pid = parsed.pid
  } catch {}
  // A takeover holds the mutex for milliseconds, and this process never holds it here (takeOver runs synchronously):
  // one naming this pid was left by an earlier process with the same pid (a restarted container), and one older than
  // MUTEX_STALE_MS was left by a process that died mid-takeover, its pid since reused.
  const isStale =
    Date.now() - modifiedMs >= MUTEX_STALE_MS ||
    (pid === undefined ? Date.now() - modifiedMs >= UNWRITTEN_LOCK_MS : pid === process.pid || !isPidAlive(pid))
  if (!isStale) return
  const aside = `${mutex}.${process.pid}.${randomBytes(6).toString('hex')}.stale`
  try {
    renameSync(mutex, aside)
  } catch {
    return
  }
  let moved: string | undefined
  try {
    moved = readFileSync(aside, 'utf8')
  } catch {}
  // A mutex taken between our read and our rename is put back. If a fourth process created one meanwhile, the put-back
  // fails and two processes hold the mutex: that needs a crash mid-takeover and four racers, and is not closed here
  // (only a kernel lock would close it).
  if (moved !== raw)
    try {
      linkSync(aside, mutex)
    } catch {}
  try {
    unlinkSync(aside)
  } catch {}
}

function isOurs(path: string, token: string): boolean {
  try {
    return parseHolder(readFileSync(path, 'utf8'))?.token === token
  } catch {
    return false
  }
}

function removeIfOurs(path: string, token: string): void {
  try {
    if (parseHolder(readFileSync(path, 'utf8'))?.token === token) unlinkSync(path)
  } catch {}
}

let isExitHookInstalled = false

/** A process that exits without closing its store (process.exit) still leaves no lock behind. */
function installExitHook(): void {
  if (isExitHookInstalled) return
  isExitHookInstalled = true
  process.on('exit', () => {
    for (const [path, token] of heldHere) removeIfOurs(path, token)
  })
}

/**
 * Checks the path and creates what is missing, one directory at a time (Node's recursive mkdir never returns under
 * /proc): the data directory itself with mode 0700, since it holds the store's secrets.
 */
function prepareDataDir(dataDir: string): void {
  const missing: string[] = []
  let existing = dataDir
  for (;;) {
    let isDirectory: boolean
    try {
      isDirectory = statSync(existing).isDirectory()
    } catch (error) {
      const code = codeOf(error)
      if (code === 'EACCES')
        throw new DataDirUnusableError(dataDir, 'cannot be reached by this user (permission denied on a directory above it)')
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new DataDirUnusableError(dataDir, `cannot be read (${code ?? String(error)})`)
      missing.unshift(existing)
      existing = dirname(existing)
      continue
    }
    if (!isDirectory)
      throw new DataDirUnusableError(
        dataDir,
        existing === dataDir ? 'is a file, not a directory' : `is inside ${existing}, which is a file`,
      )
    break
  }
  const real = realpathSync(existing)
  for (const virtual of ['/proc', '/sys'])
    if (real === virtual || real.startsWith(`${virtual}/`))
      throw new DataDirUnusableError(dataDir, `is under ${virtual}, a virtual file system that cannot hold a database`)
  for (const directory of missing) {
    try {
      mkdirSync(directory, directory === dataDir ? { mode: 0o700 } : {})
    } catch (error) {
      const code = codeOf(error)
      if (code === 'EEXIST') continue
      if (code === 'EACCES' || code === 'EPERM')
        throw new DataDirUnusableError(
          dataDir,
          `cannot be created: ${dirname(directory)}, where it would be made, is not writable by this user`,
        )
      if (code === 'EROFS') throw new DataDirUnusableError(dataDir, 'is on a read-only file system')
      throw new DataDirUnusableError(dataDir, `cannot be created (${code ?? String(error)})`)
    }
  }
  // Said before the owner check, whose remedies (chmod, chown) a read-only file system would refuse as well.
  try {
    accessSync(dataDir, constants.W_OK)
  } catch (error) {
    if (codeOf(error) === 'EROFS') throw new DataDirUnusableError(dataDir, 'is on a read-only file system')
  }
  checkDataDirOwner(dataDir)
}

/**
 * The data directory must be this user's alone, as PostgreSQL requires of its own: owned by the effective user and
 * writable by no one else. Another user who made it (`./data` under /tmp, say) could plant a lock and an operator
 * socket of their own there, and be sent the keys an operator revokes; one who can write in it could do the same.
 */
export function checkDataDirOwner(dataDir: string): void {
  const euid = process.geteuid?.()
  if (euid === undefined) return
  let stat: ReturnType<typeof statSync>
  try {
    stat = statSync(dataDir)
  } catch {
    return
  }
  if (stat.uid !== euid)
    throw new DataDirUnusableError(
      dataDir,
      `is owned by uid ${stat.uid}, not by this user (uid ${euid})`,
      `run SwapEazi as its owner, give it to this user (chown -R ${euid} ${dataDir})`,
    )
  if ((stat.mode & 0o022) !== 0)
    throw new DataDirUnusableError(
      dataDir,
      `is writable by other users (mode ${(stat.mode & 0o777).toString(8)}), who could plant files in it`,
      `chmod 700 ${dataDir}`,
    )
}

/** What holds a lock, for the messages of the processes that find it: `swapeazi` and its command, never arguments. */
function commandOfThisProcess(): string {
  const [, script = '', ...args] = process.argv
  const name = /swapeazi-mcp\.js$/.test(script)
    ? 'swapeazi-mcp'
    : /(swapeazi\.js|cli[\\/]main\.[cm]?[jt]s)$/.test(script)
      ? 'swapeazi'
      : basename(script) || 'a process'
  // Only the command words: an argument can be a key, or a URL with a secret in it.
  const words = args.slice(0, 2).filter((word) => /^[a-z]+$/.test(word))
  return [name, ...(name === 'swapeazi' && words.length === 0 ? ['serve'] : words)].join(' ')
}

function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}
