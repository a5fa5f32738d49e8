/**
 * K-EFF-3 [FIX]: a redirection to a descriptor's name (`/dev/stdout`, `/dev/stderr`, `/dev/stdin`,
 * `/dev/fd/N`) touches no file of its own, but on Linux opening such a name opens the descriptor's
 * file anew in the mode asked: `: 2<f >/dev/stderr` truncates f, `exec 3<f; echo x >>/dev/fd/3`
 * appends to it, both judged as reads of f alone before. For a principal whose boundary is the
 * static layer (unsandboxed, or tier D) that wrote any file it may only read (`~/.bashrc` under a
 * `~/**` read grant).
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import type { FsKind } from "../../../src/kernel/policy/effect_types.ts";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { rpcError } from "../../_support/rejection.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

function effects(src: string, cwd = "/w"): Effect[] {
  const state = { cwd, env: {}, changedEnv: new Set<string>(), home: "/home/me" };
  return deriveEffects(parseBash(src), src, { ...state, sessionCommands: new Set() }).effects;
}

function paths(src: string, kind: FsKind, cwd = "/w"): string[] {
  return effects(src, cwd).flatMap((e) => e.kind === kind ? e.paths : []);
}

Deno.test("K-EFF-3 [FIX]: writing a descriptor's name writes each file the source's redirections opened to read", () => {
  for (
    const src of [
      ": 2<victim >/dev/stderr",
      "exec 3<victim; echo x >>/dev/fd/3",
      "echo x >/dev/stdout 1<victim",
      "f() { echo x >/dev/stdin; }; exec 0<victim; f",
      "exec 3<victim 4<&3; echo x >/dev/fd/4",
      "exec 3<victim; exec 2>&3; echo x >/dev/fd/02",
      "exec {v}<victim; echo x >/dev/fd/10",
      "exec 5<victim {v}<&5; echo x >/dev/fd/11",
      "cat <victim &>/dev/stdin",
    ]
  ) assert.deepEqual(paths(src, "fs_write"), ["/w/victim"], src);
});

Deno.test("K-EFF-3 [FIX]: reading a descriptor's name reads each file the source's redirections opened to write", () => {
  assert.deepEqual(paths("exec 3>>secret; cat </dev/fd/3", "fs_read"), ["/w/secret"]);
  assert.deepEqual(paths("cat </dev/stdin 0>>secret", "fs_read"), ["/w/secret"]);
  assert.deepEqual(paths("exec 3>>secret; cat /dev/fd/3", "fs_read"), ["/w/secret"]);
});

Deno.test("K-EFF-3: an operand reading a descriptor's name reads no file of its own (`jq . /dev/stdin`)", () => {
  for (
    const src of [
      "echo x | cat /dev/stdin",
      "echo x | diff /dev/stdin /dev/fd/0",
      "wc -l /dev/fd/1",
    ]
  ) {
    assert.deepEqual(paths(src, "fs_read"), [], src);
  }
  assert.deepEqual(paths("echo x | diff /dev/stdin b", "fs_read"), ["/w/b"]);
});

Deno.test("K-EFF-3: a descriptor's name alone, or beside files opened the other way, adds nothing", () => {
  assert.deepEqual(paths("echo x >/dev/stderr 2>/dev/fd/3 </dev/stdin", "fs_write"), []);
  assert.deepEqual(paths("sort <in >/dev/stdout", "fs_read"), ["/w/in"]);
  assert.deepEqual(paths("sort <in >out 2>/dev/stderr", "fs_write"), ["/w/out"]);
  assert.deepEqual(paths("while read -r l; do echo $l >/dev/stderr; done <list", "fs_write"), []);
  assert.deepEqual(paths("exec 3<in; echo x >/dev/fd/4 2>&3-", "fs_write"), []);
});

Deno.test("K-EFF-3: a command's output to a descriptor's name or /dev/tty touches no file of its own", () => {
  for (
    const src of [
      "echo x | tee /dev/stderr",
      "tee -a /dev/stdout /dev/tty < /dev/null",
      "cp f /dev/stdout",
      "dd if=f of=/dev/fd/1",
    ]
  ) {
    assert.deepEqual(
      effects(src).filter((e) => e.kind === "fs_write" || e.kind === "opaque"),
      [],
      src,
    );
  }
});

Deno.test("K-EFF-3 [FIX]: a command's output to a descriptor's name writes the file put there to read; into a directory there, it is opaque", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/victim`, "");
    await Deno.mkdir(`${dir}/d`);
    assert.deepEqual(paths("exec 3<victim; echo x | tee -a /dev/fd/3", "fs_write", dir), [
      `${dir}/victim`,
    ]);
    for (const src of ["exec 3<d; cp f /dev/fd/3", "cp f /dev/stdout 1<gone"]) {
      assert.ok(effects(src, dir).some((e) => e.kind === "opaque"), src);
    }
  });
});

Deno.test("E-4: following descriptor copies is bounded: thousands of copies reopened by thousands of names make the source opaque, not minutes of analysis", () => {
  const n = 3000;
  const copies = Array.from({ length: n }, (_, i) => `${i + 3}>&${i + 4}`).join(" ");
  const reopens = Array.from({ length: n }, (_, i) => `echo x >/dev/fd/${i + 3}`).join("; ");
  const found = effects(`: ${copies} ${n + 3}<f; ${reopens}`);
  assert.ok(found.some((e) => e.kind === "opaque"), JSON.stringify(found).slice(0, 300));
  // a short chain is followed whole
  assert.deepEqual(paths(": 3>&4 4>&5 5<f; echo x >/dev/fd/3", "fs_write"), ["/w/f"]);
});

Deno.test("K-EFF-3 [FIX]: a path below a descriptor's name is a path (a directory's descriptor names its entries)", () => {
  assert.deepEqual(paths("exec 3</etc; echo x >/dev/fd/3/passwd", "fs_write"), [
    "/dev/fd/3/passwd",
  ]);
});

Deno.test("K-EFF-3 [FIX]: an unsandboxed agent that may read a file but not write it cannot write it through /dev/fd/N or /dev/stderr", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:fd", {
    fs: { read: ["~/**"], write: ["~/proj/**"] },
    proc_spawn: ["*"],
    // `exec` with redirections alone is opaque: allowed, the static layer judges the rest
    opaque: "allow",
    auto_apply: "in-grant",
    sandbox: false,
  });
  try {
    const victim = `${k.box.dir}/home/notes.txt`;
    await Deno.writeTextFile(victim, "kept\n");
    const agent = await k.attach("default", token);
    for (
      const src of [
        `exec 3<${victim}; echo written >>/dev/fd/3`,
        `: 2<${victim} >/dev/stderr`,
      ]
    ) {
      const err = await rpcError(exec(agent, src));
      assert.equal(err.code, -32010, `${src}: ${err.message}`);
    }
    assert.equal(await Deno.readTextFile(victim), "kept\n");
  } finally {
    await k.cleanup();
  }
});
