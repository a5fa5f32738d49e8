/**
 * Gives the V8 heap's free pages back to the system (issue 33). A burst of requests grows the
 * heap by pages V8 keeps once the burst's garbage is gone (7-10 MiB in the kernel after 1,000
 * execs, 2-5 MiB in the facade): its memory reducer returns them only after a full collection,
 * which a heap this small seldom needs. A compacting collection, V8's last-resort one (the one it
 * runs under memory pressure: it moves live objects together, frees the emptied pages and its page
 * pool), returns them, in 15-50 ms here. It runs only where the process was started with
 * `--expose-gc` (the kernel's `src/kernel/v8_flags`, the facade's flags in
 * `src/mcp/permissions.ts`) and the committed heap grew by a given amount since the last one: a
 * compaction leaves the young generation and the C heap to be faulted in again, which cost the
 * kernel's next exec ~1 ms when it ran after every pause (1 MiB of growth was reached by two
 * execs), so the kernel waits for {@link KERNEL_COMPACTION_GROWTH}; the facade's heap, a few MiB,
 * grows by less than that over 1,000 calls and its work per call is small, so it waits for
 * {@link FACADE_COMPACTION_GROWTH}.
 */

/** Growth of the kernel's committed V8 heap, in bytes, that makes another compaction worth it. */
export const KERNEL_COMPACTION_GROWTH = 4 << 20;

/** Growth of the facade's committed V8 heap, in bytes, that makes another compaction worth it. */
export const FACADE_COMPACTION_GROWTH = 1 << 20;

/** V8's `gc` function with the options of its GC extension. */
type GcFunction = (
  options: { type: "major"; execution: "sync"; flavor: "last-resort" },
) => void;

/**
 * A compaction of this process's V8 heap that runs when the heap grew by `growth` bytes since the
 * last one (the first always runs); null when V8 exposes no `gc` (started without `--expose-gc`).
 */
export function heapCompaction(growth: number): (() => void) | null {
  const gc = (globalThis as { gc?: GcFunction }).gc;
  if (typeof gc !== "function") return null;
  let committed = -growth;
  return () => {
    if (Deno.memoryUsage().heapTotal < committed + growth) return;
    gc({ type: "major", execution: "sync", flavor: "last-resort" });
    committed = Deno.memoryUsage().heapTotal;
  };
}
