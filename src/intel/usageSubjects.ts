/** Counter subjects (usage_counters.subject) of corridor intelligence: pro calls per key, free calls per IP. */
export const INTEL_KEY_SUBJECT_PREFIX = 'intel:key:'

/** The counter a pro key's calls are metered under, per month. */
export const intelKeySubject = (keyId: string): string => `${INTEL_KEY_SUBJECT_PREFIX}${keyId}`

/** The counter an IP's free calls count against, per month: a keyed hash of the IP, never the address. */
export const intelIpSubject = (ipHash: string): string => `intel:ip:${ipHash}`
