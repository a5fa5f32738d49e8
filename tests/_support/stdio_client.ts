/**
 * Test and bench support: the SDK client side of stdio to `bin/shoal-mcp` (the client command),
 * counting every byte the facade writes to stdout, and able to stop reading it for a while (a
 * stalled client).
 */
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { spawnLauncher } from "./facade.ts";

/** A {@link CountingStdio} prefix that execs the facade with its stdout (fd 1) non-blocking. */
export const NON_BLOCKING_STDOUT = [
  "python3",
  "-c",
  "import os, sys; os.set_blocking(1, False); os.execv(sys.argv[1], sys.argv[1:])",
];

/** An SDK transport to a facade it spawns with exactly `env`. */
export class CountingStdio implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Bytes read from the facade's stdout so far. */
  received = 0;
  /** The facade's stderr, for diagnostics. */
  stderr = "";
  child: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #reading: Promise<void> = Promise.resolve();
  /** Set while reading is paused: resolves when it resumes. */
  #paused: { resumed: Promise<void>; resume: () => void } | null = null;

  /** `prefix` execs the facade command it is given (see {@link spawnLauncher}). */
  constructor(
    private readonly env: Record<string, string>,
    private readonly prefix: string[] = [],
  ) {}

  start(): Promise<void> {
    this.child = spawnLauncher(this.env, [], "piped", this.prefix);
    this.#writer = this.child.stdin.getWriter();
    this.#reading = this.#read(this.child.stdout);
    new Response(this.child.stderr).text().then((t) => this.stderr = t, () => {});
    return Promise.resolve();
  }

  /** Stops reading the facade's stdout (the chunk in hand is still handled). */
  pause(): void {
    if (this.#paused) return;
    let resume!: () => void;
    const resumed = new Promise<void>((r) => resume = r);
    this.#paused = { resumed, resume };
  }

  /** Reads the facade's stdout again. */
  resume(): void {
    this.#paused?.resume();
    this.#paused = null;
  }

  async #read(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of stdout) {
        this.received += chunk.length;
        pending += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = pending.indexOf("\n")) !== -1) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.trim() !== "") this.onmessage?.(JSON.parse(line));
        }
        if (this.#paused) await this.#paused.resumed;
      }
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.#writer!.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }

  async close(): Promise<void> {
    this.resume();
    await this.#writer?.close().catch(() => {});
    await this.child?.status;
    await this.#reading;
  }
}
