/**
 * Across: how long relayers may fill one of our deposits (its `fillDeadline`, set by the builder) before it is refunded
 * to the depositor. A lane whose fills take longer than this allows cannot deliver what a quote promises.
 */
export const ACROSS_FILL_WINDOW_SEC = 6 * 60 * 60
