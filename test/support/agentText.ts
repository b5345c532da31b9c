/**
 * Issue 14 item 12: what an agent reads is written for it. No text names our files, our source, the specification,
 * or tells the caller to lowercase an address (which would switch the checksum off). Shared by the HTTP and MCP scans.
 */
export const AGENT_TEXT_FORBIDDEN: readonly RegExp[] = [
  /manifest\//,
  // A file name: `.json` is allowed only as part of the endpoint paths an agent may fetch (ENDPOINT_PATHS).
  /\.json\b/,
  /\bspec(ification)?\b/i,
  /lower ?case/i,
  /src\//,
  /\.ts\b/,
]

/** Endpoint paths ending in .json: paths an agent may fetch, not our files. */
export const ENDPOINT_PATHS: readonly string[] = ['/.well-known/x402.json', '/openapi.json']

/** The patterns a text breaks, after the allowed endpoint paths are taken out. */
export function agentTextOffences(text: string): string[] {
  let scanned = text
  for (const path of ENDPOINT_PATHS) scanned = scanned.split(path).join('')
  return AGENT_TEXT_FORBIDDEN.filter((pattern) => pattern.test(scanned)).map(String)
}
