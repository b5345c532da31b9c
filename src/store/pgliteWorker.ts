// The embedded store's own thread (pgliteThread.ts): a PGlite database opened here, and its statements and
// transactions run here, for the main thread that posts them. Started by openPgliteInWorker, never run directly. It
// imports PGlite at once, and opens a database when the main thread, holding the data directory's lock,
// asks it to.
import { parentPort } from 'node:worker_threads'
import { loadPglite, openPgliteDatabase } from './pgliteDatabase.ts'
import type { Sql } from './sql.ts'
import { type StoreRequest, type StoreResponse, serializableError } from './pgliteThreadProtocol.ts'

type Tx = Parameters<Parameters<Sql['transaction']>[0]>[0]

/** A transaction the main thread has begun: its statements, and how it ends. */
type OpenTransaction = { tx: Tx; end: (commit: boolean) => void; ended: Promise<unknown> }

/** Marks a rollback the main thread asked for, so it is not reported as the transaction's failure. */
const ROLLBACK = Symbol('rollback')

async function main(): Promise<void> {
  const port = parentPort
  if (port === null) throw new Error('pgliteWorker.ts runs as a worker thread (openPgliteInWorker)')
  // Its failure is the open's.
  const warming = loadPglite()
  warming.catch(() => {})
  const open = await new Promise<Extract<StoreRequest, { op: 'open' }>>((resolve) =>
    port.once('message', (request: StoreRequest) => {
      if (request.op === 'open') resolve(request)
    }),
  )
  let sql: Omit<Sql, 'isExclusive' | 'dataDirLock'>
  try {
    await warming
    sql = await openPgliteDatabase(open.dataDir, open.template === undefined ? undefined : new Blob([open.template]))
  } catch (error) {
    port.postMessage({ id: open.id, error: serializableError(error) } satisfies StoreResponse)
    return
  }
  port.postMessage({ id: open.id, rows: [] } satisfies StoreResponse)
  const transactions = new Map<number, OpenTransaction>()

  // `work` runs inside the promise, so one that throws at once (a statement on a transaction that has ended) is
  // that request's error, never an uncaught exception that would end the thread and every statement after it.
  const answer = (id: number, work: () => Promise<unknown[] | undefined>): void => {
    Promise.resolve()
      .then(work)
      .then(
        (rows) => port.postMessage({ id, rows: rows ?? [] } satisfies StoreResponse),
        (error: unknown) => port.postMessage({ id, error: serializableError(error) } satisfies StoreResponse),
      )
  }
  const transactionOf = (id: number): OpenTransaction => {
    const open = transactions.get(id)
    if (open === undefined) throw new Error(`no open transaction ${id} in the store's thread`)
    return open
  }

  port.on('message', (request: StoreRequest) => {
    switch (request.op) {
      case 'open':
        answer(request.id, () => Promise.reject(new Error("the store's thread has a database open already")))
        return
      case 'query':
        answer(request.id, () => sql.query(request.text, request.params))
        return
      case 'begin': {
        // PGlite's own transaction holds its lock until `end` is called: statements from outside it wait, as on the
        // main thread. It is answered once BEGIN has run.
        let began!: () => void
        const started = new Promise<void>((resolve) => {
          began = resolve
        })
        let end!: (commit: boolean) => void
        const ending = new Promise<void>((resolve, reject) => {
          end = (commit) => (commit ? resolve() : reject(ROLLBACK))
        })
        const ended = sql.transaction(async (tx) => {
          transactions.set(request.tx, { tx, end, ended })
          began()
          await ending
        })
        // A transaction that failed before it began (BEGIN refused) answers here.
        answer(request.id, () => Promise.race([started, ended]).then(() => undefined))
        // Its outcome is reported to the commit or rollback that ends it.
        ended.catch(() => {})
        return
      }
      case 'txquery':
        answer(request.id, () => transactionOf(request.tx).tx.query(request.text, request.params))
        return
      case 'commit':
      case 'rollback': {
        answer(request.id, async () => {
          const open = transactionOf(request.tx)
          transactions.delete(request.tx)
          open.end(request.op === 'commit')
          try {
            await open.ended
          } catch (error) {
            if (error !== ROLLBACK) throw error
          }
          return undefined
        })
        return
      }
      case 'close':
        answer(request.id, async () => {
          await sql.close()
          // Nothing is left to run here: the port closes, and the thread ends once this answer is sent.
          setImmediate(() => port.close())
          return undefined
        })
        return
    }
  })
}

await main()
