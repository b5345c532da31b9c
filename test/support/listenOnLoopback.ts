import { serve } from '@hono/node-server'
import type { AddressInfo } from 'node:net'

export type ListeningApp = { base: string; close(): Promise<void> }

/** Serves an app's fetch on 127.0.0.1 and an ephemeral port: a real socket for tests that need one. */
export function listenOnLoopback(fetch: Parameters<typeof serve>[0]['fetch']): Promise<ListeningApp> {
  return new Promise((resolve) => {
    const server = serve({ fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
      resolve({ base: `http://127.0.0.1:${info.port}`, close: () => new Promise<void>((done) => server.close(() => done())) })
    })
  })
}
