/** A copy of a typed array, `size` long: how the tables of typed-array columns grow. */
export function widened<T extends Float64Array | Int32Array | Uint8Array>(old: T, size: number): T {
  const made = new (old.constructor as new (length: number) => T)(size);
  made.set(old);
  return made;
}
