/** Test support: git as the local human. */
import assert from "node:assert/strict";

/** Runs git as the local human, unconfined, in `cwd`; fails the test when git fails. */
export async function hostGit(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: [
      "-c",
      "user.name=a",
      "-c",
      "user.email=a@x",
      "-c",
      "protocol.file.allow=always",
      ...args,
    ],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}
