/**
 * Issue 34 item 3: sed scripts against real GNU sed. Each form runs under real sed in a fresh
 * directory; every file it created or changed there must be among the derived `fs_write` paths,
 * or the derivation must be `opaque`. Forms that ordinary work uses must stay exact.
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** One sed command line (the words after `sed`), the environment real sed gets beyond PATH. */
interface Form {
  args: string[];
  env?: Record<string, string>;
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Every file of `dir` (not below) with its content. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.isFile) files.set(entry.name, Deno.readTextFileSync(`${dir}/${entry.name}`));
  }
  return files;
}

/** Runs real GNU sed on `form` in `dir`; the names of the files it created or changed. */
async function sedTouches(dir: string, form: Form): Promise<string[]> {
  const before = snapshot(dir);
  await new Deno.Command("sed", {
    args: form.args,
    cwd: dir,
    env: { PATH: "/usr/bin:/bin", ...form.env },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  const after = snapshot(dir);
  return [...after].filter(([name, text]) => before.get(name) !== text).map(([name]) => name);
}

function effectsOf(dir: string, form: Form): Effect[] {
  const src = ["sed", ...form.args].map(quote).join(" ");
  return deriveEffects(parseBash(src), src, {
    cwd: dir,
    env: {},
    changedEnv: new Set(),
    home: "/nonexistent",
    sessionCommands: new Set(),
  }).effects;
}

function writesOf(effects: Effect[]): string[] {
  const write = effects.find((e) => e.kind === "fs_write");
  return write?.kind === "fs_write" ? write.paths : [];
}

function isOpaque(effects: Effect[]): boolean {
  return effects.some((e) => e.kind === "opaque");
}

/** Checks `form` against real sed in a fresh directory holding `in` and `script.sed`; its effects. */
async function judge(form: Form): Promise<{ effects: Effect[]; touched: string[]; dir: string }> {
  let result: { effects: Effect[]; touched: string[]; dir: string } | undefined;
  await withTempDir(async (dir) => {
    dir = Deno.realPathSync(dir);
    Deno.writeTextFileSync(`${dir}/in`, "x\ny\n");
    Deno.writeTextFileSync(`${dir}/script.sed`, "w out\n");
    const effects = effectsOf(dir, form);
    const touched = await sedTouches(dir, form);
    if (!isOpaque(effects)) {
      const writes = writesOf(effects);
      for (const name of touched) {
        assert.ok(
          writes.includes(`${dir}/${name}`),
          `sed ${form.args.map(quote).join(" ")} changed ${name}, derived ${
            JSON.stringify(effects)
          }`,
        );
      }
    }
    result = { effects, touched, dir };
  });
  return result!;
}

/** Forms that write or run something, each in a position of the grammar. */
const WRITERS: Form[] = [
  // After labels: GNU ends a label at blanks and `;`, and the next command follows.
  { args: [":a;w out", "in"] },
  { args: ["-n", ":a w out", "in"] },
  { args: [":a\tw out", "in"] },
  { args: ["b x w out", "in"] },
  { args: ["bx;w out", "in"] },
  { args: ["tx;:x;W out", "in"] },
  { args: ["Tx ; :x ; s/x/y/w out", "in"] },
  { args: ["-n", "{:a;w out\n}", "in"] },
  { args: ["-n", "$!{:a;N;ba};w out", "in"] },
  // Inside blocks, after addresses and `!`, after `;` and newlines.
  { args: ["-n", "/x/{w out\n}", "in"] },
  { args: ["-n", "1!{w out\n}", "in"] },
  { args: ["-n", "1 ! w out", "in"] },
  { args: ["-n", "$!N;w out", "in"] },
  { args: ["-n", "p;;  ;\n\n w out", "in"] },
  { args: ["-n", "p # c\nw out", "in"] },
  { args: ["-n", "#n\nw out", "in"] },
  { args: ["0,/x/w out", "in"] },
  { args: ["1~2w out", "in"] },
  { args: ["1,+1w out", "in"] },
  { args: ["1 , ~2 w out", "in"] },
  { args: ["/X/Iw out", "in"] },
  { args: ["\\%x%I w out", "in"] },
  { args: ["\\;x;w out", "in"] },
  // s: custom delimiters, escaped delimiters, flag combinations, blanks between flags.
  { args: ["s/x/y/gw out", "in"] },
  { args: ["s/x/y/ g p w out", "in"] },
  { args: ["s/x/y/2Iw out", "in"] },
  { args: ["s x y w out", "in"] },
  { args: ["s;x;y;w out", "in"] },
  { args: ["swxwywwout", "in"] },
  { args: ["s/\\//y/w out", "in"] },
  { args: ["s|x\\|y|z|w out", "in"] },
  { args: ["s/[/]/y/w out", "in"] },
  { args: ["s€x€y€w out", "in"] },
  { args: ["s€x€y€w out", "in"], env: { LC_ALL: "C" } },
  { args: ["s/x/y/;w out", "in"] },
  { args: ["y/xy/yx/;w out", "in"] },
  // Executing: `e`, `s///e`, anywhere.
  { args: ["e touch ran", "in"] },
  { args: ["1e touch ran", "in"] },
  { args: [":a;e touch ran", "in"] },
  { args: ["s/.*/touch ran/e", "in"] },
  { args: ["s/.*/touch ran/ge", "in"] },
  { args: ["s/.*/touch ran/ e", "in"] },
  { args: ["-n", "{s/.*/touch ran/e\n}", "in"] },
  // Text commands end at the line's end; a backslash-newline continues them.
  { args: ["a foo\nw out", "in"] },
  { args: ["a\\\nfoo\\\nw out", "in"] },
  { args: ["1i\\  foo\nw out", "in"] },
  { args: ["$c\\\nw out", "in"] },
  // Options: joined -e pieces, continuations across pieces, -f files, combined and long forms.
  { args: ["-e", "p", "-e", "w out", "in"] },
  { args: ["-e", "a\\", "-e", "w out", "in"] },
  { args: ["-e", "s/x/y\\", "-e", "/w out", "in"] },
  { args: ["-e", ":a", "-e", "w out", "in"] },
  { args: ["-ne", "w out", "in"] },
  { args: ["-nes/x/y/w out", "in"] },
  { args: ["--expression=w out", "in"] },
  { args: ["--expr", "w out", "in"] },
  { args: ["-f", "script.sed", "in"] },
  { args: ["--file=script.sed", "in"] },
  { args: ["-nf", "script.sed", "in"] },
  { args: ["-s", "-n", "w out", "in", "in"] },
  { args: ["-i", "w out", "in"] },
  { args: ["-i.bak", "s/x/z/", "in"] },
  { args: ["-ie", "s/x/z/", "in"] },
  { args: ["-z", "w out", "in"] },
  { args: ["-E", "s/(x)/y/w out", "in"] },
  { args: ["-r", "-n", "/x|y/w out", "in"] },
  { args: ["--posix", "w out", "in"] },
  { args: ["-u", "-l", "5", "w out", "in"] },
  { args: ["--debug", "w out", "in"] },
  { args: ["--sandbox", "s/x/y/", "in"] },
  // Under POSIXLY_CORRECT options stop at the first operand: this --sandbox is a file name.
  { args: ["w out", "in", "--sandbox"], env: { POSIXLY_CORRECT: "1" } },
  { args: ["r in", "--", "-n"] },
];

Deno.test("issue 34: no sed form changes a file that its derived effects do not name (GNU sed 4.9 as the oracle)", async () => {
  for (const form of WRITERS) await judge(form);
});

Deno.test("issue 34: the label forms that used to hide a write are reported (or opaque)", async () => {
  for (const script of [":a;w out", "b x w out", "bx;:x w out"]) {
    const { effects, touched, dir } = await judge({ args: [script, "in"] });
    assert.deepEqual(touched, ["out"], "real sed wrote it");
    assert.ok(isOpaque(effects) || writesOf(effects).includes(`${dir}/out`), script);
  }
});

Deno.test("issue 34: executing sed scripts are opaque wherever the e stands", async () => {
  for (const form of WRITERS.filter((f) => f.args.some((a) => a.includes("touch ran")))) {
    const { effects, touched } = await judge(form);
    assert.ok(touched.includes("ran"), `real sed ran it: ${form.args.join(" ")}`);
    assert.ok(isOpaque(effects), form.args.join(" "));
  }
});

Deno.test("issue 34: ordinary sed scripts stay exact, with their reads and writes", async () => {
  const exact: [string[], string[], string[]][] = [
    // args, writes (names in the directory), reads
    [["-n", "/x/{p;q}", "in"], [], ["in"]],
    [[":a;N;$!ba;s/\\n/ /g", "in"], [], ["in"]],
    [["-n", "$!{h;d};x;G;p", "in"], [], ["in"]],
    [["s/x/y/gw out", "in"], ["out"], ["in"]],
    [["-e", "s/x/y/", "-e", "w out", "in"], ["out"], ["in"]],
    [[":a w out", "in"], ["out"], ["in"]],
    [["1r in\n$W out", "in"], ["out"], ["in"]],
    [["-i", "s/x/y/", "in"], ["in"], []],
    [["s/x/y/w /dev/stdout", "in"], [], ["in"]],
    [["y/xy/yx/", "in"], [], ["in"]],
    [["1i\\\nhead", "in"], [], ["in"]],
    [["2q5", "in"], [], ["in"]],
    [["--sandbox", "s/x/y/", "in"], [], ["in"]],
  ];
  for (const [args, writes, reads] of exact) {
    const { effects, dir } = await judge({ args });
    assert.ok(!isOpaque(effects), `${args.join(" ")}: ${JSON.stringify(effects)}`);
    assert.deepEqual(writesOf(effects), writes.map((n) => `${dir}/${n}`), args.join(" "));
    const read = effects.find((e) => e.kind === "fs_read");
    assert.deepEqual(
      read?.kind === "fs_read" ? read.paths : [],
      reads.map((n) => `${dir}/${n}`),
      args.join(" "),
    );
  }
});

Deno.test("issue 34: sed scripts not parsed completely are opaque", () => {
  for (
    const script of [
      "w",
      "s/x/y/w",
      "s/x/y",
      "s\nx\ny\n",
      "s\\x\\y\\",
      "y/x/y/p",
      "p}",
      "{p}p",
      "L",
      "ba#c\nw out",
      "1!!p",
      "\\\nx\np",
      "s/x/y/3 k",
      "s€x€y€w out",
      "\\€x€p",
      "k",
    ]
  ) {
    const effects = effectsOf("/w", { args: [script, "in"] });
    assert.ok(isOpaque(effects), `${JSON.stringify(script)}: ${JSON.stringify(effects)}`);
  }
});
