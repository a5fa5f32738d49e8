/** What a PTY's program makes the kernel hold is bounded by its grid (K-PTY-8). */
import assert from "node:assert/strict";
import { CELL_TEXT_BYTES } from "../../../src/kernel/pty/emulator_bounds.ts";
import { openPty, rssMiB, waitForScreen } from "./_helpers.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** Runs python `code` on a PTY until it prints DONE; the screen then and the RSS growth in MiB. */
async function afterProgram(code: string): Promise<{ screen: string[]; grewMiB: number }> {
  let result = { screen: [] as string[], grewMiB: 0 };
  await withTempDir(async (dir) => {
    const before = rssMiB();
    const pty = await openPty(dir, "python3", ["-c", code]);
    try {
      const end = await waitForScreen(pty, (s) => s.screen.includes("DONE"), 3000);
      result = { screen: end.screen, grewMiB: rssMiB() - before };
    } finally {
      await pty.close();
    }
  });
  return result;
}

Deno.test("K-PTY-8 a character followed by 4 M combining accents makes one bounded cell, not 4 M characters of kernel heap built one concatenation at a time (found by probe8: 100 M kept a kernel busy for minutes and past 900 MB)", async () => {
  const { screen, grewMiB } = await afterProgram(
    'import sys; sys.stdout.write("a" + "\\u0301" * 4_000_000 + "\\r\\nDONE\\r\\n")',
  );
  assert.ok(screen[0].startsWith("a\u0301"), screen[0].slice(0, 20));
  const bytes = new TextEncoder().encode(screen[0]).length;
  assert.ok(bytes <= CELL_TEXT_BYTES, `the cell holds ${bytes} bytes`);
  assert.ok(grewMiB < 100, `the test process grew by ${grewMiB.toFixed(0)} MiB`);
});

Deno.test("K-PTY-8 hyperlinks and window titles of megabytes each are not kept: 40 links of 2.5 MB left on the screen grew the kernel by their size", async () => {
  const { screen, grewMiB } = await afterProgram([
    "import sys",
    "for i in range(40):",
    '    sys.stdout.write("\\x1b]8;;http://x/%d/%s\\x07L\\x1b]8;;\\x07" % (i, "a" * 2_500_000))',
    '    sys.stdout.write("\\x1b]2;%s\\x07\\x1b[22t" % ("t" * 2_500_000))',
    'sys.stdout.write("\\r\\nDONE\\r\\n")',
  ].join("\n"));
  assert.equal(screen[0], "L".repeat(40), "the links' text is shown");
  assert.ok(grewMiB < 100, `the test process grew by ${grewMiB.toFixed(0)} MiB`);
});

Deno.test("K-PTY-8 a DECRQSS or colour OSC (4, 10, 104) left unended holds no megabytes of its payload: 8 PTYs that each left one of 9.9 M characters open held 1.2 GB of the kernel", async () => {
  await withTempDir(async (dir) => {
    const before = rssMiB();
    const opens = ["\\033P$q", "\\033]4;", "\\033]10;", "\\033]104;"];
    const written = (i: number) => `${dir}/written${i}`;
    const ptys = [];
    try {
      for (const [i, open] of opens.entries()) {
        const flood = `head -c 9900000 /dev/zero | tr '\\0' a`;
        const script = `printf '${open}'; ${flood}; : > ${written(i)}; sleep 30`;
        ptys.push(await openPty(dir, "sh", ["-c", script]));
      }
      for (const [i, pty] of ptys.entries()) {
        // what the program wrote before the file is in the emulator once the screen answers
        await waitForScreen(pty, () => {
          try {
            return Deno.statSync(written(i)).isFile;
          } catch {
            return false;
          }
        }, 1500);
        await pty.read();
      }
      const grew = rssMiB() - before;
      assert.ok(grew < 100, `the test process grew by ${grew.toFixed(0)} MiB`);
    } finally {
      for (const pty of ptys) await pty.close();
    }
  });
});

Deno.test("K-PTY-8 DECRQSS is answered as the emulator's own handler answers it: a known setting, an overlong one as unknown (P0$r), then the scroll region", async () => {
  await withTempDir(async (dir) => {
    const long = "m".repeat(40);
    const script =
      `stty raw -echo; printf '\\033P$qm\\033\\\\\\033P$q${long}\\033\\\\\\033P$qr\\033\\\\'; ` +
      `dd bs=1 count=28 2>/dev/null | od -An -c; echo END; sleep 30`;
    const pty = await openPty(dir, "sh", ["-c", script], { rows: 10 });
    try {
      // od prints a line per 16 bytes as they come: END follows the last of the three answers
      const end = await waitForScreen(pty, (s) => s.screen.some((row) => row.includes("END")));
      const text = end.screen.join(" ").replace(/\s+/g, " ");
      assert.match(
        text,
        /033 P 1 \$ r 0 m 033 \\ 033 P 0 \$ r 033 \\ 033 P 1 \$ r 1 ; 1 0 r 033 \\/,
        text,
      );
    } finally {
      await pty.close();
    }
  });
});
