/**
 * `deps` with `extra` added, keeping its getters live: the live market defines `catalogue` as a getter
 * (buildAppDeps), and an object spread would copy its value at that moment, so everything built from the copy would
 * price from the start-up catalogue for good.
 */
export function extendDeps<T extends object, U extends object>(deps: T, extra: U): Omit<T, keyof U> & U {
  return Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(deps), ...Object.getOwnPropertyDescriptors(extra) }) as Omit<
    T,
    keyof U
  > &
    U
}
