/**
 * Coalesces concurrent reads of the same key without ever answering a caller with data read before it arrived.
 *
 * A caller that finds no read in flight for its key starts one. A caller that arrives while a read is in flight does
 * not join it (that read may have started before a write the caller already saw committed); it joins the *next*
 * read, which starts when the current one settles, so after every caller waiting for it arrived. At most one read
 * per key is in flight and one queued, so under load many requests share one database round trip, and each still
 * sees every write committed before it arrived (what "visible to the next read" requires of the catalog reads).
 */
export function createFreshCoalescer<K, V>(load: (key: K) => Promise<V>) {
  const inflight = new Map<K, Promise<V>>();
  const queued = new Map<K, Promise<V>>();

  function start(key: K): Promise<V> {
    const promise = load(key);
    inflight.set(key, promise);
    const clear = () => {
      if (inflight.get(key) === promise) inflight.delete(key);
    };
    promise.then(clear, clear);
    return promise;
  }

  return {
    /** The value for `key` from a read that started no earlier than this call. */
    get(key: K): Promise<V> {
      const running = inflight.get(key);
      if (!running) return start(key);
      let next = queued.get(key);
      if (!next) {
        const after = () => {
          queued.delete(key);
          return start(key);
        };
        next = running.then(after, after);
        queued.set(key, next);
      }
      return next;
    },
  };
}
