// The baseline: a bare node:http handler that reads the JSON body, parses it and answers a small JSON object.
// Run as its own process; reports its port to the parent over IPC.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end('{"error":"bad json"}')
      return
    }
    const keys = parsed !== null && typeof parsed === 'object' ? Object.keys(parsed).length : 0
    const body = JSON.stringify({ ok: true, keys })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
})

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.send?.({ port })
})
process.on('disconnect', () => server.close(() => process.exit(0)))
process.once('SIGTERM', () => server.close(() => process.exit(0)))
