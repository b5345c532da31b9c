import * as z from 'zod'

/**
 * The lock file in a PGlite data directory (src/store/dataDirLock.ts): which process holds the directory, and where
 * its operator endpoint listens once it serves one.
 */
export const DataDirHolder = z.object({
  pid: z.number().int().positive(),
  /** When the lock was taken (ISO 8601): a live pid whose process started later is a reused pid. */
  startedAt: z.iso.datetime(),
  /** What holds it, such as `swapeazi serve`. */
  command: z.string(),
  /** Random, per lock: tells this lock from a later one, and authenticates requests to the operator endpoint. */
  token: z.string().min(16),
  /** The holder's operator endpoint (a Unix socket), once it listens; null when it serves none. */
  socket: z.string().nullable(),
  /** The holder's HTTP API, once it listens (`swapeazi serve`); null otherwise. */
  url: z.string().nullable(),
  /**
   * Where its pid means something: the machine's boot id and the holder's pid namespace (Linux), or null where they
   * cannot be read. A process elsewhere (another container on a shared volume, another host) cannot check the pid,
   * and goes by the lock's heartbeat instead. Absent in locks written before it.
   */
  namespace: z.string().nullable().optional(),
})
export type DataDirHolder = z.infer<typeof DataDirHolder>
