/**
 * A configured URL fit for an `href`: only http(s), so a misconfigured `javascript:` or `data:` URL is shown as text
 * and never becomes a link. The caller still escapes it.
 */
export function safeHref(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? url : undefined
  } catch {
    return undefined
  }
}
