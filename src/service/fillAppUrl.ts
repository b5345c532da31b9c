/** Catalogue texts name the end-user application as `{app_url}` (the spec's placeholder); fill in the configured one. */
export function fillAppUrl(text: string, appUrl: string): string {
  return text.replaceAll('{app_url}', appUrl)
}
