import { randomBytes } from 'node:crypto'
import { newSwapRef } from './swapRef.ts'

/**
 * A new disbursement reference: `dsb_` and the same time-sortable id as a swap reference (DESIGN 7.13), so it fits a
 * bytes32 (swapRefToBytes32 carries it in every order of the batch).
 */
export function newDisbursementRef(nowMs: number, random: (size: number) => Uint8Array = randomBytes): string {
  return `dsb_${newSwapRef(nowMs, random).slice('swp_'.length)}`
}
