import { FACADE_COMPACTION_GROWTH, heapCompaction } from "../protocol/heap_compaction.ts";
import { startIdleWork } from "../protocol/idle_work.ts";
import type { KernelClient } from "./kernel_client.ts";
import { FacadeServer } from "./server.ts";
import { StdioTransport } from "./stdio_transport.ts";
import { stdoutWriter } from "./stdout_writer.ts";

/** How long requests in flight at stdin EOF may still be answered before the facade exits. */
const EOF_DRAIN_MS = 5000;

/**
 * Serves MCP on stdio through `kernel` until stdin ends (M-CLI-3), then closes the subscriptions
 * and the kernel connections.
 */
export async function serveStdio(kernel: KernelClient, log: (line: string) => void): Promise<void> {
  const transport = new StdioTransport(Deno.stdin, stdoutWriter, EOF_DRAIN_MS);
  const facade = new FacadeServer(kernel, transport, log);
  await facade.start();
  const compact = heapCompaction(FACADE_COMPACTION_GROWTH);
  const stopIdleWork = compact === null ? null : startIdleWork(compact);
  await transport.finished;
  stopIdleWork?.();
  facade.subscriptions.closeAll();
  kernel.close();
}
