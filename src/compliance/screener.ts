/** Outcome of screening one address; `list` names the matching list for logs only, never for clients. */
export type ScreenResult = { isListed: false } | { isListed: true; list: string }

/** Screens wallet addresses before any swap is built or paid for (DESIGN 7.18). */
export type Screener = { screen(address: string): Promise<ScreenResult> }
