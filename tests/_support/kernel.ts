/** Test support: a real kernel process on a real Unix socket in a private sandbox. */
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { createToken, writePolicy } from "./principals.ts";
import type { Rec } from "./rec.ts";
import { KERNEL_BIN, type Sandbox, sandbox } from "./sandbox.ts";
import { delay, waitUntil } from "./wait.ts";
import { memoryKiB } from "./proc.ts";

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

/** Spawns `bin/shoal-kernel --socket <sandbox socket>` with `args` and waits until it prints `ready`. */
export async function startKernel(
  args: string[] = [],
  box?: Sandbox,
  extraEnv: Record<string, string> = {},
): Promise<TestKernel> {
  box ??= await sandbox();
  const socket = box.socket();
  return await launchKernel(box, ["--socket", socket, ...args], socket, extraEnv);
}

/**
 * Spawns `bin/shoal-kernel` (or `launcher`, as {@link spawnKernel} takes it) with exactly `args`
 * (which make it serve on `socket`) and waits until it prints `ready`.
 */
export async function launchKernel(
  box: Sandbox,
  args: string[],
  socket: string,
  extraEnv: Record<string, string> = {},
  launcher?: string[],
): Promise<TestKernel> {
  const child = spawnKernel(box, args, extraEnv, launcher);
  const stderr: string[] = [];
  const reading = collectLines(child.stderr, stderr);
  let exited = false; // a kernel that exits before it is ready is not waited for
  child.status.then(() => exited = true);
  const ready = () => stderr.some((l) => l.includes("ready"));
  await waitUntil(() => exited || ready(), 30000);
  if (!ready()) {
    if (!exited) child.kill("SIGKILL");
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
      return await attachTo(await kernel.connect(), session, token);
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

/** `conn` once attached to `session` (with `token`, if any) as a test client without a TTY. */
async function attachTo(
  conn: RpcConnection,
  session: string,
  token: string | null,
): Promise<RpcConnection> {
  await conn.request("session.attach", { session, token, client: { kind: "test", tty: false } });
  return conn;
}

/** Runs the kernel binary with exactly `args` until it exits (at most 30 s); its status and stderr. */
export async function kernelUntilExit(
  box: Sandbox,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stderr: string }> {
  const child = spawnKernel(box, args, extraEnv);
  const lines: string[] = [];
  const reading = collectLines(child.stderr, lines);
  const timer = setTimeout(() => child.kill("SIGKILL"), 30000);
  const status = await child.status;
  clearTimeout(timer);
  await reading;
  return { code: status.code, stderr: lines.join("\n") };
}

/** Spawns the kernel binary (or `launcher`, e.g. deno with other flags) in the sandbox environment; only stderr is piped. */
export function spawnKernel(
  box: Sandbox,
  args: string[],
  extraEnv: Record<string, string> = {},
  launcher: string[] = [KERNEL_BIN],
): Deno.ChildProcess {
  return new Deno.Command(launcher[0], {
    args: [...launcher.slice(1), ...args],
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

/** A `Deno.test` running `body` against a kernel from `start` (a fresh one by default), then cleaning it up. */
export function kernelTest(
  name: string,
  body: (k: TestKernel) => Promise<void>,
  start: () => Promise<TestKernel> = () => startKernel(),
): void {
  Deno.test(name, async () => {
    const k = await start();
    try {
      await body(k);
    } finally {
      await k.cleanup();
    }
  });
}

/** A `Deno.test` running `body` on a connection attached to session `default` of a fresh kernel. */
export function withKernel(
  name: string,
  body: (conn: RpcConnection, k: TestKernel) => Promise<void>,
): void {
  kernelTest(name, async (k) => await body(await k.attach(), k));
}

/**
 * A {@link withKernel} for the cases of one file that need no kernel of their own: they share one
 * from `start`, started before the file's first case and stopped after its last, each case on a
 * session of its own (`case-N`, also what its `attach()` names by default) and its connections
 * closed when it ends. A case that stops the kernel or reads what every session does (the whole
 * journal, a count of the kernel's shells) keeps a kernel of its own.
 */
export function sharedKernel(
  start: () => Promise<TestKernel> = () => startKernel(),
): (name: string, body: (conn: RpcConnection, k: TestKernel) => Promise<void>) => void {
  let shared: TestKernel | undefined;
  Deno.test.beforeAll(async () => {
    shared = await start();
  });
  Deno.test.afterAll(async () => await shared?.cleanup());
  let cases = 0;
  return (name, body) => {
    const own = `case-${++cases}`;
    Deno.test(name, async () => {
      const k = shared!;
      const opened: RpcConnection[] = [];
      const mustNot = () =>
        Promise.reject(new Error("the file's shared kernel outlives its cases"));
      const view: TestKernel = {
        ...k,
        async connect() {
          const conn = await k.connect();
          opened.push(conn);
          return conn;
        },
        async attach(session = own, token = null) {
          return await attachTo(await view.connect(), session, token);
        },
        stop: mustNot,
        cleanup: mustNot,
      };
      try {
        await body(await view.attach(), view);
      } finally {
        for (const conn of opened) conn.close();
      }
    });
  };
}

/** Starts a kernel in a fresh sandbox with `--policy` naming a policy file that holds `principals`. */
export async function startKernelWithPolicy(principals: Rec): Promise<TestKernel> {
  const box = await sandbox();
  try {
    return await startKernel(["--policy", await writePolicy(box, principals)], box);
  } catch (e) {
    await box.cleanup();
    throw e;
  }
}

/** A kernel started with a policy file, and a bearer token for the agent principal. */
export interface AgentKernel {
  kernel: TestKernel;
  /** The bearer secret of `principal`. */
  token: string;
}

/**
 * Starts a kernel in a fresh sandbox whose policy file holds `policy` (or what it gives for that
 * sandbox) for `principal`, after creating a token for that principal with `shoal-kernel token
 * create` in the kernel's state dir.
 */
export async function startKernelWithAgent(
  principal: string,
  policy: Rec | ((box: Sandbox) => Rec),
): Promise<AgentKernel> {
  const box = await sandbox();
  try {
    const { secret } = await createToken(box, principal, principal);
    const entry = typeof policy === "function" ? policy(box) : policy;
    const file = await writePolicy(box, { [principal]: entry });
    return { kernel: await startKernel(["--policy", file], box), token: secret };
  } catch (e) {
    await box.cleanup();
    throw e;
  }
}

/**
 * The entries of a kernel's `tmp/` in state directory `state` that are neither its scratch
 * directories (`run-…`) nor its blanks (`blank-…`): spools and staging files a run left behind.
 */
export function leftInTmp(state: string): Deno.DirEntry[] {
  return [...Deno.readDirSync(`${state}/tmp`)].filter((e) => !/^(run|blank)-/.test(e.name));
}

/**
 * How many MiB `k`'s RSS grew over `work`, read once the kernel settled before (a first run's
 * garbage collected) and after: the first reading under `boundMiB` once its idle collection and
 * trim (`daemon/idle_trim.ts`, 2-4 s after the last request, later on a loaded machine) gave the
 * memory back, else the reading after 20 s. Memory kept alive stays above the bound for the 20 s;
 * a passing run does not wait them out.
 */
export async function kernelGrowthMiB(
  k: TestKernel,
  conn: RpcConnection,
  boundMiB: number,
  work: () => Promise<void>,
): Promise<number> {
  await conn.request("exec", { src: "echo warm" });
  await delay(3000);
  const before = memoryKiB(k.child.pid).rss;
  await work();
  // the reading that came under the bound: RSS moves by a few MiB, so a later one may not
  let grownMiB = Infinity;
  await waitUntil(
    () => (grownMiB = (memoryKiB(k.child.pid).rss - before) / 1024) < boundMiB,
    20000,
  );
  return grownMiB;
}
