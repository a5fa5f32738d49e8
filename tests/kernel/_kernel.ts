/** Test helpers: a real kernel process on a real Unix socket in a private sandbox. */
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { REPO, type Sandbox, sandbox, waitUntil } from "../mcp/_facade.ts";

/** The local kernel executable, as autostart and `deno task kernel` run it. */
export const KERNEL_BIN = `${REPO}/bin/shoal-kernel`;

/** A running kernel with its sandbox. */
export interface TestKernel {
  box: Sandbox;
  socket: string;
  child: Deno.ChildProcess;
  /** Stderr lines seen so far. */
  stderr: string[];
  /** A new connection attached to `session` (token optional). */
  attach(session?: string, token?: string | null): Promise<RpcConnection>;
  /** A new unattached connection. */
  connect(): Promise<RpcConnection>;
  /** SIGTERMs the kernel and waits for it; returns its exit status. */
  stop(): Promise<number>;
  /** Stops the kernel (if running) and removes the sandbox. */
  cleanup(): Promise<void>;
}

/** Spawns `bin/shoal-kernel` with `args` and waits until it prints `ready`. */
export async function startKernel(
  args: string[] = [],
  box?: Sandbox,
  extraEnv: Record<string, string> = {},
): Promise<TestKernel> {
  box ??= await sandbox();
  const socket = box.socket();
  const child = spawnKernel(box, ["--socket", socket, ...args], extraEnv);
  const stderr: string[] = [];
  const reading = collectLines(child.stderr, stderr);
  const ready = await waitUntil(() => stderr.some((l) => l.includes("ready")), 30000);
  if (!ready) {
    child.kill("SIGKILL");
    await child.status;
    await reading;
    throw new Error(`kernel did not start: ${stderr.join("\n")}`);
  }
  const connections: RpcConnection[] = [];
  let stopped: Promise<number> | null = null;
  const kernel: TestKernel = {
    box,
    socket,
    child,
    stderr,
    async connect() {
      const conn = await RpcConnection.connect(socket);
      connections.push(conn);
      return conn;
    },
    async attach(session = "default", token = null) {
      const conn = await kernel.connect();
      await conn.request("session.attach", {
        session,
        token,
        client: { kind: "test", tty: false },
      });
      return conn;
    },
    stop() {
      stopped ??= (async () => {
        for (const c of connections) c.close();
        try {
          child.kill("SIGTERM");
        } catch {
          // already exited
        }
        const status = await child.status;
        await reading;
        return status.code;
      })();
      return stopped;
    },
    async cleanup() {
      await kernel.stop();
      await box!.cleanup();
    },
  };
  return kernel;
}

/** Spawns the kernel binary in the sandbox environment; only stderr is piped. */
export function spawnKernel(
  box: Sandbox,
  args: string[],
  extraEnv: Record<string, string> = {},
): Deno.ChildProcess {
  return new Deno.Command(KERNEL_BIN, {
    args,
    env: box.env(extraEnv),
    clearEnv: true,
    cwd: box.dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

/** Appends each decoded line of a stream to `lines` until it ends. */
export async function collectLines(stream: ReadableStream<Uint8Array>, lines: string[]) {
  let pending = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    const parts = pending.split("\n");
    pending = parts.pop()!;
    lines.push(...parts);
  }
  if (pending) lines.push(pending);
}
