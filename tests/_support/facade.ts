/** Test helpers: the facade spawned exactly as MCP clients run it (`bin/shoal-mcp`) or as the release runs it, by the SDK or by raw frames. */
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { releaseFlags } from "../../src/mcp/permissions.ts";
import { spawnPiped } from "./proc.ts";
import { REPO, type Sandbox, sandbox } from "./sandbox.ts";

/** The client command, `bin/shoal-mcp`, with `args`. */
export function launcherArgs(args: string[] = []): { command: string; args: string[] } {
  return { command: `${REPO}/bin/shoal-mcp`, args };
}

/** An SDK stdio client transport that starts the facade like an MCP client. */
export function sdkTransport(box: Sandbox, extraEnv: Record<string, string> = {}) {
  return new StdioClientTransport({
    ...launcherArgs(),
    env: box.env(extraEnv),
    stderr: "pipe",
  });
}

/**
 * An SDK stdio client transport that starts the facade as the release runs it: `deno run` under
 * exactly the release flags (M-PERM-3), with this checkout's `bin/` (its `shoal-kernel`) leading PATH.
 */
export function releaseTransport(box: Sandbox, extraEnv: Record<string, string> = {}) {
  const env = box.env(extraEnv);
  return new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", ...releaseFlags(), `--config=${REPO}/deno.json`, `${REPO}/main.ts`],
    env: { ...env, PATH: `${REPO}/bin:${env.PATH}` },
    stderr: "pipe",
  });
}

/**
 * The client command with `args`, exactly `env`, and piped stdin and stdout; `prefix` is a
 * command that execs the rest of its arguments (e.g. to set up the facade's stdio first).
 */
export function spawnLauncher(
  env: Record<string, string>,
  args: string[] = [],
  stderr: "piped" | "null" = "piped",
  prefix: string[] = [],
): Deno.ChildProcess {
  const { command, args: full } = launcherArgs(args);
  return spawnPiped([...prefix, command, ...full], env, stderr);
}

/** The facade started like an MCP client starts it, with piped stdin and stdout, read by the caller. */
export function spawnFacade(
  box: Sandbox,
  extraEnv: Record<string, string> = {},
): Deno.ChildProcess {
  return spawnLauncher(box.env(extraEnv), [], "null");
}

/** The facade started like an MCP client starts it, driven by raw stdin/stdout frames. */
export class RawFacade {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #frames: unknown[] = [];
  #waiters: (() => void)[] = [];
  #stdoutDone: Promise<void>;
  #stderr: Promise<string>;
  /** Every stdout line that was not valid JSON (must stay empty: stdout carries only frames). */
  readonly junk: string[] = [];
  /** Once set to an array, every later stdout line as written (numbers a JSON.parse would round). */
  lines: string[] | null = null;

  constructor(box: Sandbox, args: string[] = [], extraEnv: Record<string, string> = {}) {
    this.child = spawnLauncher(box.env(extraEnv), args);
    this.#writer = this.child.stdin.getWriter();
    this.#stdoutDone = this.#readStdout();
    this.#stderr = new Response(this.child.stderr).text();
  }

  async #readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of this.child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) !== -1) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        this.lines?.push(line);
        try {
          this.#frames.push(JSON.parse(line));
        } catch {
          this.junk.push(line);
        }
        for (const w of this.#waiters.splice(0)) w();
      }
    }
    if (pending !== "") this.junk.push(pending);
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Writes text or bytes to the facade's stdin as they are. */
  async write(data: string | Uint8Array): Promise<void> {
    await this.#writer.write(typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  /** Writes one message as a frame. */
  async send(message: unknown): Promise<void> {
    await this.write(JSON.stringify(message) + "\n");
  }

  /** The next frame matching `match` (removed from the queue), or an error after `ms`. */
  async next(
    match: (frame: Record<string, unknown>) => boolean = () => true,
    ms = 20000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    while (true) {
      const i = this.#frames.findIndex((f) => match(f as Record<string, unknown>));
      if (i !== -1) return this.#frames.splice(i, 1)[0] as Record<string, unknown>;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${ms} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.#waiters.push(resolve)),
        new Promise<void>((resolve) => timer = setTimeout(resolve, left)),
        this.#stdoutDone,
      ]);
      clearTimeout(timer);
      if (this.#frames.length === 0 && await isSettled(this.#stdoutDone)) {
        throw new Error("facade stdout closed");
      }
    }
  }

  /** The response frame with the given id. */
  response(id: unknown, ms?: number): Promise<Record<string, unknown>> {
    return this.next((f) => Object.hasOwn(f, "id") && f.id === id && !("method" in f), ms);
  }

  /** Sends a request and returns its response frame. */
  async request(
    id: string | number,
    method: string,
    params?: unknown,
  ): Promise<Record<string, unknown>> {
    await this.send(
      params === undefined ? { jsonrpc: "2.0", id, method } : {
        jsonrpc: "2.0",
        id,
        method,
        params,
      },
    );
    return await this.response(id);
  }

  /** Frames received and not yet taken. */
  get queued(): unknown[] {
    return this.#frames;
  }

  /** Closes stdin. */
  async closeStdin(): Promise<void> {
    await this.#writer.close().catch(() => {});
  }

  /** Waits for exit (killing the facade after `ms`) and returns status and stderr. */
  async exit(ms = 20000): Promise<{ code: number; stderr: string }> {
    const timer = setTimeout(() => this.kill(), ms);
    const status = await this.child.status;
    clearTimeout(timer);
    await this.#stdoutDone;
    return { code: status.code, stderr: await this.#stderr };
  }

  /** The pid of the facade: `bin/shoal-mcp` execs into it, so the child itself once it serves. */
  facadePid(): number {
    return this.child.pid;
  }

  /** Kills the facade (SIGKILL), for cleanup after failures. */
  kill(): void {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  /** Closes stdin, waits for exit, and kills whatever is left. */
  async stop(): Promise<{ code: number; stderr: string }> {
    await this.closeStdin();
    return await this.exit(10000);
  }
}

async function isSettled(p: Promise<void>): Promise<boolean> {
  let settled = false;
  p.then(() => settled = true);
  await Promise.resolve();
  await Promise.resolve();
  return settled;
}

/**
 * Runs `body` with a raw facade of a fresh sandbox (given too), initialized under 2025-11-25, then
 * stops the facade and removes the sandbox.
 */
export async function withRawFacade(
  body: (facade: RawFacade, box: Sandbox) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const facade = new RawFacade(box);
  try {
    await facade.request(1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
    });
    await body(facade, box);
  } finally {
    await facade.stop().catch(() => facade.kill());
    await box.cleanup();
  }
}
