import { isoTimestamp, type Sql } from './sql.ts'

/** One Across lane's last read as kept (migration 14): what was read, from which API, and when. */
export type KeptAcrossLaneRead = {
  /** `<bridge id>:<SRC>><DST>`. */
  lane: string
  apiUrl: string
  /** The lane's query and the sizes read with Across's answers, as the live market wrote them (JSON). */
  figures: unknown
  readAtMs: number
}

/**
 * Each Across lane's last suggested fees, kept in the store so a restart inside their maximum age serves the lane at
 * once (src/market/acrossLaneFees.ts). One row per lane and API; replicas on PostgreSQL share them.
 */
export type AcrossFeesStore = {
  /** Keeps a lane's read, unless a read of the same lane at least as recent is already kept (another replica's). */
  save(read: KeptAcrossLaneRead): Promise<void>
  /** Drops a lane's kept read from `apiUrl` made at or before `upToMs`: Across refused the lane since. */
  forget(lane: string, apiUrl: string, upToMs: number): Promise<void>
  /** Every lane's kept read from `apiUrl` made at or after `readSinceMs`. */
  load(apiUrl: string, readSinceMs: number): Promise<KeptAcrossLaneRead[]>
}

export function createAcrossFeesStore(sql: Sql): AcrossFeesStore {
  return {
    async save({ lane, apiUrl, figures, readAtMs }) {
      await sql.query(
        `insert into across_lane_fees (lane, api_url, figures, read_at) values ($1, $2, $3, $4)
         on conflict (lane, api_url) do update set figures = excluded.figures, read_at = excluded.read_at
           where across_lane_fees.read_at < excluded.read_at`,
        [lane, apiUrl, JSON.stringify(figures), new Date(readAtMs).toISOString()],
      )
    },
    async forget(lane, apiUrl, upToMs) {
      await sql.query(`delete from across_lane_fees where lane = $1 and api_url = $2 and read_at <= $3`, [
        lane,
        apiUrl,
        new Date(upToMs).toISOString(),
      ])
    },
    async load(apiUrl, readSinceMs) {
      const rows = await sql.query<{ lane: string; figures: unknown; read_at: unknown }>(
        `select lane, figures, read_at from across_lane_fees where api_url = $1 and read_at >= $2`,
        [apiUrl, new Date(readSinceMs).toISOString()],
      )
      return rows.map((row) => ({
        lane: row.lane,
        apiUrl,
        // node-postgres and PGlite parse jsonb; a driver that hands back text is parsed here.
        figures: typeof row.figures === 'string' ? JSON.parse(row.figures) : row.figures,
        readAtMs: Date.parse(isoTimestamp(row.read_at)),
      }))
    },
  }
}
