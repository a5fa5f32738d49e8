/**
 * Test helper: a wire tap on a Unix socket that forwards every connection to the real kernel's
 * socket byte for byte and records each frame sent towards the kernel, so a test can check the
 * exact requests the facade makes (nothing is answered by the tap itself).
 */
import type { Rec } from "../_support/rec.ts";
import { startKernel, type TestKernel } from "../_support/kernel.ts";
import { RawFacade } from "../_support/facade.ts";

/** One frame a client sent through the tap towards the kernel. */
export interface TappedRequest {
  /** Which tapped connection carried it (0 = the first one accepted). */
  conn: number;
  method: string;
  params: Rec;
  /** The frame's exact text (integers beyond 2^53 keep their digits here). */
  raw: string;
}

/** A listening tap at `path` forwarding to `upstream`. */
export class WireTap {
  readonly requests: TappedRequest[] = [];
  #listener: Deno.Listener;
  #conns: Deno.Conn[] = [];
  /** The client side of each tapped connection, by connection number. */
  #clients: Deno.Conn[] = [];
  #accepting: Promise<void>;
  #connections = 0;

  constructor(readonly path: string, readonly upstream: string) {
    this.#listener = Deno.listen({ transport: "unix", path });
    this.#accepting = this.#accept();
  }

  /** The requests recorded from index `from` on whose method is `method`. */
  sent(method: string, from = 0): TappedRequest[] {
    return this.requests.slice(from).filter((r) => r.method === method);
  }

  /**
   * Writes `bytes` to the client side of connection `conn`, as if the kernel had sent them;
   * stops early when the client closes the connection meanwhile.
   */
  async inject(conn: number, bytes: Uint8Array): Promise<void> {
    let at = 0;
    try {
      while (at < bytes.length) at += await this.#clients[conn].write(bytes.subarray(at));
    } catch (e) {
      // The client hung up, or the tap closed its side after the client did.
      const closed = [
        Deno.errors.BrokenPipe,
        Deno.errors.ConnectionReset,
        Deno.errors.Interrupted,
        Deno.errors.BadResource,
      ];
      if (!closed.some((type) => e instanceof type)) throw e;
    }
  }

  /** Stops listening and closes every forwarded connection. */
  async close(): Promise<void> {
    this.#listener.close();
    for (const c of this.#conns) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
    await this.#accepting;
  }

  async #accept(): Promise<void> {
    try {
      for await (const down of this.#listener) {
        const conn = this.#connections++;
        let up: Deno.Conn;
        try {
          up = await Deno.connect({ transport: "unix", path: this.upstream });
        } catch {
          down.close();
          continue;
        }
        this.#conns.push(down, up);
        this.#clients[conn] = down;
        this.#pipe(down, up, conn);
        this.#pipe(up, down, null);
      }
    } catch {
      // listener closed
    }
  }

  /** Copies `from` to `to`; frames are recorded (before forwarding) when `conn` is not null. */
  async #pipe(from: Deno.Conn, to: Deno.Conn, conn: number | null): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    const decoder = new TextDecoder();
    let pending = "";
    try {
      while (true) {
        const n = await from.read(buf);
        if (n === null) break;
        if (conn !== null) {
          pending += decoder.decode(buf.subarray(0, n), { stream: true });
          let nl: number;
          while ((nl = pending.indexOf("\n")) !== -1) {
            const raw = pending.slice(0, nl);
            pending = pending.slice(nl + 1);
            const frame = JSON.parse(raw);
            this.requests.push({ conn, method: frame.method, params: frame.params ?? {}, raw });
          }
        }
        let at = 0;
        while (at < n) at += await to.write(buf.subarray(at, n));
      }
    } catch {
      // either side went away
    }
    for (const c of [to, from]) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
  }
}

/** How the facade is told to use the tap: its arguments and extra environment. */
export type TapLaunch = (tapPath: string) => { args: string[]; env: Record<string, string> };

const BY_FLAG: TapLaunch = (tapPath) => ({
  args: ["--socket", tapPath],
  env: { SHOAL_NO_AUTOSTART: "1" },
});

/**
 * A `Deno.test` with a real kernel on the sandbox's default socket, a {@link WireTap} in front of
 * it, and a raw facade (no autostart) pointed at the tap, by default with `--socket`. Everything
 * is stopped after.
 */
export function tapTest(
  name: string,
  body: (facade: RawFacade, tap: WireTap, kernel: TestKernel) => Promise<void>,
  launch: TapLaunch = BY_FLAG,
): void {
  Deno.test(name, async () => {
    const kernel = await startKernel();
    const tap = new WireTap(`${kernel.box.dir}/tap.sock`, kernel.socket);
    const { args, env } = launch(tap.path);
    const facade = new RawFacade(kernel.box, args, env);
    try {
      await body(facade, tap, kernel);
    } finally {
      facade.kill();
      await facade.exit().catch(() => {});
      await tap.close();
      await kernel.cleanup();
    }
  });
}
