/** Shared helpers for the PTY tests: a predictable environment and bounded screen polling. */

import { Pty, type PtyOpenOptions, type PtyScreen } from "../../../src/kernel/pty/pty.ts";
import { encodePtyInput } from "../../../src/kernel/pty/keys.ts";
import { psField, rssBytes } from "../../_support/proc.ts";
import type { TestKernel } from "../../_support/kernel.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay } from "../../_support/wait.ts";

/** Gap between polls of `read()` in {@link waitForScreen}. */
const POLL_MS = 20;

/** A child environment with the test runner's PATH and a fixed prompt. */
export function testEnv(home: string): Record<string, string> {
  return { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, PS1: "$ " };
}

/** Opens a PTY running `cmd args` in `cwd` at 80x24 unless told otherwise. */
export function openPty(
  cwd: string,
  cmd: string,
  args: string[],
  more: Partial<PtyOpenOptions> = {},
): Promise<Pty> {
  return Pty.open({
    cmd,
    args,
    cwd,
    env: testEnv(cwd),
    cols: 80,
    rows: 24,
    sandbox: null,
    ...more,
  });
}

/** Sends `pty.send`-style input, encoded for the PTY's current cursor-key mode. */
export function send(pty: Pty, input: unknown): Promise<number> {
  return pty.write(encodePtyInput(input, pty.applicationCursorKeys));
}

/** Polls `read()` until `predicate` holds, at most `maxTries` times; throws with the last screen otherwise. */
export async function waitForScreen(
  pty: Pty,
  predicate: (s: PtyScreen) => boolean,
  maxTries = 250,
): Promise<PtyScreen> {
  let last: PtyScreen | null = null;
  for (let i = 0; i < maxTries; i++) {
    last = await pty.read();
    if (predicate(last)) return last;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`screen never matched; last:\n${JSON.stringify(last, null, 1)}`);
}

/** Whether a process with this pid exists (a zombie counts as existing). */
export function processExists(pid: number): boolean {
  return psField(pid, "pid") !== null;
}

/** RSS of this test process in MiB. */
export function rssMiB(): number {
  return rssBytes(Deno.pid) / (1024 * 1024);
}

/**
 * Opens `sh -c script` on a `cols`×`rows` PTY of `k` and counts how often another connection's
 * `pty.list`, sent 1 ms after the last answer as a client's next request is, was answered while
 * the program ran (E-4); returns the opening connection, the PTY's id and that count.
 */
export async function answersWhileRunning(
  k: TestKernel,
  script: string,
  cols: number,
  rows: number,
): Promise<{ conn: RpcConnection; ptyId: number; answers: number }> {
  const conn = await k.attach();
  const other = await k.attach();
  const opened = await conn.request("pty.open", {
    cmd: "sh",
    args: ["-c", script],
    cols,
    rows,
  }) as Rec;
  let answers = 0;
  for (let alive = true; alive; answers++) {
    await delay(1);
    const listed = await other.request("pty.list", {}) as Rec;
    alive = (listed.ptys as Rec[]).some((p) => p.pty_id === opened.pty_id && p.alive === true);
  }
  return { conn, ptyId: opened.pty_id as number, answers };
}
