/**
 * The facade's way to a kernel socket it holds no `net` permission for (M-PERM-3): the kernel
 * executable's relay, `<kernel> connect`, whose stdin and stdout carry the same framed stream as
 * the socket.
 */
import { type ByteStream, RpcConnection } from "../protocol/rpc_client.ts";
import type { SocketEnv } from "../protocol/socket_path.ts";
import { RELAY_COMMAND, RELAY_UNREACHABLE, relayConnectedLine } from "../protocol/relay.ts";
import { spawnProblem } from "./spawn_problem.ts";

/**
 * The relay did not connect: `unreachable` when nothing listens on the socket (autostart may
 * help); otherwise retrying cannot help (untrusted path, denied access, no kernel executable).
 */
export class RelayConnectError extends Error {
  constructor(message: string, readonly unreachable: boolean) {
    super(message);
  }
}

/** A relay child's stdout and stdin, read and written as the socket they stand for. */
class RelayStream implements ByteStream {
  #child: Deno.ChildProcess;
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #held: Uint8Array = new Uint8Array(0);

  constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#reader = child.stdout.getReader();
    this.#writer = child.stdin.getWriter();
  }

  async read(p: Uint8Array): Promise<number | null> {
    while (this.#held.length === 0) {
      const { value, done } = await this.#reader.read();
      if (done) return null;
      this.#held = value;
    }
    const n = Math.min(p.length, this.#held.length);
    p.set(this.#held.subarray(0, n));
    this.#held = this.#held.subarray(n);
    return n;
  }

  async write(p: Uint8Array): Promise<number> {
    await this.#writer.write(p);
    return p.length;
  }

  /** Closes both pipes, which ends the relay; the kill covers a relay stuck on a full socket. */
  close(): void {
    this.#writer.close().catch(() => {});
    this.#reader.cancel().catch(() => {});
    try {
      this.#child.kill("SIGTERM");
    } catch {
      // already exited
    }
  }
}

/**
 * Reads the relay's stderr until it reports the connection to `socket`; then keeps draining it
 * in the background and returns null. Otherwise returns why not: the last line the relay wrote
 * before its stderr ended, or the other path it reports connected to.
 */
async function awaitConnected(
  stderr: ReadableStream<Uint8Array>,
  socket: string,
): Promise<string | null> {
  const connected = relayConnectedLine(socket);
  const connectedTo = relayConnectedLine("");
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let last = "";
  while (true) {
    const { value, done } = await reader.read();
    if (done) return last.trim();
    text += value;
    let nl: number;
    while ((nl = text.indexOf("\n")) !== -1) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      if (line === connected) {
        (async () => {
          while (!(await reader.read()).done);
        })().catch(() => {});
        return null;
      }
      if (line.startsWith(connectedTo)) {
        reader.cancel().catch(() => {});
        return `the relay found ${line.slice(connectedTo.length)}, not ${socket}`;
      }
      if (line.trim() !== "") last = line;
    }
  }
}

/** How the facade found its socket by default discovery (G-SOCK-1), for the relay to repeat. */
export interface Discovery {
  session: string;
  env: SocketEnv;
}

/**
 * Starts the relay of `kernel` to `socket` and resolves with the connection once the relay is
 * connected; throws {@link RelayConnectError} with the relay's reason when it is not. A socket
 * found by `discovery` is named to the relay the same way (with the environment values the
 * facade read, empty for unset), so the relay checks it below the same runtime root (G-SOCK-10);
 * with null the relay is given the explicit path.
 */
export async function connectThroughRelay(
  kernel: string,
  socket: string,
  searchPath: string | null,
  discovery: Discovery | null,
): Promise<RpcConnection> {
  const named = discovery === null ? ["--socket", socket] : ["--session", discovery.session];
  const env: Record<string, string> = { SHOAL_TOKEN: "" };
  if (discovery !== null) {
    env.XDG_RUNTIME_DIR = discovery.env.XDG_RUNTIME_DIR ?? "";
    env.TMPDIR = discovery.env.TMPDIR ?? "";
  }
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(kernel, {
      args: [RELAY_COMMAND, ...named],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env,
    }).spawn();
  } catch (e) {
    throw new RelayConnectError(spawnProblem(kernel, searchPath, e), false);
  }
  const stream = new RelayStream(child);
  const failure = await awaitConnected(child.stderr, socket);
  if (failure === null) return new RpcConnection(stream);
  // The relay has exited unless it connected elsewhere; a kill then cannot change its status.
  if (failure.startsWith("the relay found ")) stream.close();
  const { code } = await child.status;
  stream.close();
  const reason = failure.replace(/^shoal-kernel: /, "") ||
    `the relay ${JSON.stringify(kernel)} exited with status ${code}`;
  throw new RelayConnectError(reason, code === RELAY_UNREACHABLE);
}
