/** Kernel shutdown ends every PTY, also one whose `pty.open` was under way when it began (K-PTY-5, G-SOCK-8). */
import { shutdownDuring } from "../../_support/shutdown_race.ts";

/** A program that ignores the hangup and runs until killed; `marker` names it in its command line. */
const stubborn = (marker: string) => ["-c", 'trap "" HUP; while :; do sleep 1; done', marker];

Deno.test("K-PTY-5/G-SOCK-8 a pty.open under way when the kernel is told to stop leaves no program running and the kernel exits (it registered the PTY after every PTY was closed: the kernel waited for its program forever)", async () => {
  // an open whose program line takes a while to analyse; a PTY open before keeps the shutdown's
  // close of PTYs busy for its 500 ms grace meanwhile
  const many = Array.from({ length: 20000 }, (_, i) => `a${i}`);
  await shutdownDuring(
    (conn, marker) => conn.request("pty.open", { cmd: "sh", args: stubborn(marker) }),
    (conn, marker) => conn.request("pty.open", { cmd: "sh", args: [...stubborn(marker), ...many] }),
    "a PTY's program",
  );
});
