/** Narrowing a full-screen program's terminal (the alternate screen) narrows its grid (K-PTY-4, K-PTY-8, K-PTY-9). */
import assert from "node:assert/strict";
import { openPty, send, waitForScreen } from "./_helpers.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("K-PTY-4/K-PTY-8 after narrowing a program on the alternate screen from 100 to 40 columns, no row is longer than 40 (the emulator kept each row's 100 cells: reads showed them, the program's erase to end of line stopped at column 40, and widening again brought the old text back)", async () => {
  await withTempDir(async (dir) => {
    // the alternate screen (as vi, less and top use it), 5 rows of 100 digits, then on each line
    // of input: row 1 rewritten with an erase to its end
    const script = [
      "stty -echo",
      "printf '\\033[?1049h\\033[H'",
      "for i in 1 2 3 4 5; do printf '%0100d\\r\\n' 0; done",
      "printf 'ready'",
      "while read -r line; do printf '\\033[1;1H%s\\033[K' \"$line\"; done",
    ].join("; ");
    const pty = await openPty(dir, "sh", ["-c", script], { cols: 100, rows: 8 });
    try {
      await waitForScreen(pty, (s) => s.screen.includes("ready"));
      pty.resize(40, 8);
      const narrow = await pty.read();
      const longest = Math.max(...narrow.screen.map((row) => row.length));
      assert.equal(longest, 40, "the longest row after narrowing");
      await send(pty, ["redrawn", { key: "Enter" }]);
      const redrawn = await waitForScreen(pty, (s) => s.screen[0] === "redrawn");
      assert.equal(redrawn.screen[1], "0".repeat(40));
      pty.resize(100, 8);
      const wide = await pty.read();
      assert.equal(wide.screen[0], "redrawn", "the erased row stays erased");
      assert.equal(wide.screen[1], "0".repeat(40), "cut cells do not come back");
    } finally {
      await pty.close();
    }
  });
});
