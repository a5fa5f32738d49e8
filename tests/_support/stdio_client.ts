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
  /** The facade's stderr so far, for diagnostics. */
  stderr = "";
  /**
   * Every stdout line that was not valid JSON: reported to `onerror` and skipped, as the SDK's
   * own stdio transport does (stdout must carry only whole frames, W-FRAME-8).
   */
  readonly junk: string[] = [];
  child: Deno.ChildProcess | null = null;
  /** How the facade ended, once it has (null while it runs). */
  status: Deno.CommandStatus | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #reading: Promise<void> = Promise.resolve();
  #stderrDone: Promise<void> = Promise.resolve();
  /** Set while reading is paused: resolves when it resumes. */
  #paused: { resumed: Promise<void>; resume: () => void } | null = null;

  /** `prefix` execs the facade command it is given (see {@link spawnLauncher}). */
  constructor(
    private readonly env: Record<string, string>,
    private readonly prefix: string[] = [],
  ) {}

  start(): Promise<void> {
    this.child = spawnLauncher(this.env, [], "piped", this.prefix);
    this.child.status.then((status) => this.status = status);
    this.#writer = this.child.stdin.getWriter();
    this.#reading = this.#read(this.child.stdout);
    this.#stderrDone = this.#readStderr(this.child.stderr);
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
          if (line.trim() !== "") this.#receive(line);
        }
        if (this.#paused) await this.#paused.resumed;
      }
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
    this.onclose?.();
  }

  #receive(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(line);
    } catch (e) {
      this.junk.push(line);
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    this.onmessage?.(message);
  }

  async #readStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const text of stderr.pipeThrough(new TextDecoderStream())) this.stderr += text;
    } catch {
      // the facade is gone; what it wrote is kept
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.#writer!.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }

  /**
   * Closes the facade's stdin and waits for it to exit, killing it (SIGKILL, by pid) when it has
   * not within `ms`; its stdout and stderr are read to their end.
   */
  async close(ms = 10_000): Promise<void> {
    this.resume();
    await this.#writer?.close().catch(() => {});
    const child = this.child;
    if (child !== null) {
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
      }, ms);
      await child.status;
      clearTimeout(timer);
    }
    await this.#reading;
    await this.#stderrDone;
  }
}
