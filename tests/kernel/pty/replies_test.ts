/**
 * The emulator's answers to a program's terminal queries (cursor position, device attributes) go
 * back to its input (K-PTY-8), and what waits to be written there is bounded.
 */
import assert from "node:assert/strict";
import { openPty, rssMiB, waitForScreen } from "./_helpers.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("K-PTY-8 a program that asks for the cursor position without reading its input makes the kernel hold no queue of answers: 10 MB of ESC [ 6 n queued 2 M writes (2 GB in 16 s of yes)", async () => {
  await withTempDir(async (dir) => {
    const before = rssMiB();
    // raw: the input is not a line the line discipline throws away once full
    const script =
      `stty raw -echo; yes "$(printf '\\033[6n')" | head -c 10000000; echo DONE; sleep 30`;
    const pty = await openPty(dir, "sh", ["-c", script]);
    try {
      await waitForScreen(pty, (s) => s.screen.some((row) => row.includes("DONE")), 1500);
      const grew = rssMiB() - before;
      assert.ok(grew < 100, `the test process grew by ${grew.toFixed(0)} MiB`);
    } finally {
      await pty.close();
    }
  });
});

Deno.test("K-PTY-8 a program that reads its input still gets each answer whole and in order (cursor position, then device attributes)", async () => {
  await withTempDir(async (dir) => {
    const script = `stty raw -echo; printf '\\033[3;5H\\033[6n\\033[c'; ` +
      `dd bs=1 count=13 2>/dev/null | od -An -c; sleep 30`;
    const pty = await openPty(dir, "sh", ["-c", script]);
    try {
      const end = await waitForScreen(pty, (s) => s.screen.some((row) => row.includes("c")));
      const text = end.screen.join(" ").replace(/\s+/g, " ");
      assert.match(text, /033 \[ 3 ; 5 R 033 \[ \? 1 ; 2 c/, text);
    } finally {
      await pty.close();
    }
  });
});
