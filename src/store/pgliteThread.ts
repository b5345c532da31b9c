// The embedded store on a thread of its own (DESIGN 9, issue 15 item 10): a PGlite data directory is opened and run in
// a worker thread (pgliteWorker.ts), behind the same Sql interface. Postgres' start-up in WebAssembly (most of a
// second) then runs beside the rest of the service's start instead of after it, and a statement's WebAssembly work
// leaves the event loop's thread free to serve the next request.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { revivedError, type StoreRequest, type StoreResponse } from './pgliteThreadProtocol.ts'
import { type Sql, transactionScope } from './sql.ts'

/**
 * scripts/compiledCli.js builds pgliteWorker.ts as an entry of its own beside the compiled CLI and defines this as
 * that file's path relative to this source file (the compiled CLI keeps each source's `import.meta.url`). Run from
 * the sources (tsx, tests), it is not defined.
 */
declare const __SWAPEAZI_PGLITE_WORKER__: string | undefined

/** Spreads a request over the types StoreRequest allows: every request carries its own id. */
type Request = StoreRequest extends infer R ? (R extends StoreRequest ? Omit<R, 'id'> : never) : never

function startWorker(): Worker {
  if (typeof __SWAPEAZI_PGLITE_WORKER__ === 'string') return new Worker(new URL(__SWAPEAZI_PGLITE_WORKER__, import.meta.url))
  // From the sources: the thread registers tsx before it imports the TypeScript worker.
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/index\.cjs$/, 'index.mjs'),
  ).href
  const worker = new URL('./pgliteWorker.ts', import.meta.url).href
  return new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}) })`, {
    eval: true,
  })
}

/**
 * Opens the PGlite data directory `dataDir` in a worker thread of its own; the caller holds its lock. Resolves once
 * Postgres has started there; rejects with the thread's error (the directory unusable, say) after the thread ends.
 * Statements are posted as they come and run in order; a transaction holds PGlite's lock in the thread, so statements
 * from outside it wait there, as they do on the main thread.
 */
export function openPgliteInWorker(dataDir: string, template?: Blob): Promise<Omit<Sql, 'isExclusive' | 'dataDirLock'>> {
  return (async () => startSql(dataDir, template === undefined ? undefined : await template.arrayBuffer()))()
}

function startSql(dataDir: string, template: ArrayBuffer | undefined): Promise<Omit<Sql, 'isExclusive' | 'dataDirLock'>> {
  const worker = startWorker()
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>()
  let nextId = 1
  let nextTx = 1
  /** Why the thread can take no more requests: closed, or ended on its own. */
  let ended: Error | undefined

  // The thread keeps the process alive only while it has a request to answer, as a store on the main thread does.
  const call = (request: Request, transfer: ArrayBuffer[] = []): Promise<unknown[]> => {
    if (ended !== undefined) return Promise.reject(new Error(ended.message))
    const id = nextId++
    if (pending.size === 0) worker.ref()
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject })
      worker.postMessage({ ...request, id }, transfer)
    })
  }
  const settle = (id: number) => {
    const waiting = pending.get(id)
    pending.delete(id)
    if (pending.size === 0) worker.unref()
    return waiting
  }
  const endAll = (reason: Error) => {
    ended ??= reason
    for (const waiting of pending.values()) waiting.reject(new Error(reason.message))
    pending.clear()
  }

  worker.on('message', (response: StoreResponse) => {
    const waiting = settle(response.id)
    if (waiting === undefined) return
    if ('error' in response) waiting.reject(revivedError(response.error))
    else waiting.resolve(response.rows)
  })
  worker.on('error', (error) => endAll(new Error(`the embedded store's thread failed: ${error.message}`)))
  worker.on('exit', (code) => endAll(new Error(`the embedded store's thread ended (exit code ${code})`)))

  const sql: Omit<Sql, 'isExclusive' | 'dataDirLock'> = {
    describe: dataDir.startsWith('memory://') ? 'pglite (in memory)' : `pglite (${dataDir})`,
    query: <Row>(text: string, params: readonly unknown[] = []) => call({ op: 'query', text, params }) as Promise<Row[]>,
    async transaction<T>(work: (tx: Omit<Sql, 'transaction' | 'close' | 'isExclusive' | 'dataDirLock'>) => Promise<T>): Promise<T> {
      const tx = nextTx++
      await call({ op: 'begin', tx })
      const scope = transactionScope()
      let result: T
      try {
        result = await work({
          describe: 'pglite transaction',
          query: async <Row>(text: string, params: readonly unknown[] = []) => {
            scope.check()
            return (await call({ op: 'txquery', tx, text, params })) as Row[]
          },
        }).finally(scope.end)
      } catch (error) {
        await call({ op: 'rollback', tx }).catch(() => {})
        throw error
      }
      await call({ op: 'commit', tx })
      return result
    },
    async close() {
      if (ended !== undefined) return
      await call({ op: 'close' })
      ended = new Error('PGlite is closed')
      await worker.terminate()
    },
  }

  const opening = call({ op: 'open', dataDir, ...(template === undefined ? {} : { template }) }, template === undefined ? [] : [template])
  return opening.then(
    () => sql,
    async (error: unknown) => {
      // The thread has nothing open: let it end before the caller releases the directory's lock.
      await worker.terminate()
      throw error
    },
  )
}
