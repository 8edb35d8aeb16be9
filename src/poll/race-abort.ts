/** Racing a promise against an AbortSignal, with a short grace for the promise's own error. */

/**
 * A collector that honours the signal settles right after the abort with its own, more precise
 * error (which request was cut off); this is how long it gets before the poll moves on.
 */
const ABORT_GRACE_MS = 200;

/** Settles with the promise, or rejects with `onAbort()` shortly after the signal fires. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let grace: NodeJS.Timeout | undefined;
    const abort = () => {
      grace = setTimeout(() => reject(onAbort()), ABORT_GRACE_MS);
    };
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        clearTimeout(grace);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', abort);
        clearTimeout(grace);
        reject(e);
      },
    );
  });
}
