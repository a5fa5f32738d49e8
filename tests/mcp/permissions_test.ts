/** M-PERM-2/4: the facade under its exact local permissions; a denied permission is never a crash or a prompt. */
import assert from "node:assert/strict";
import { localFlags, releaseFlags } from "../../src/mcp/permissions.ts";
import { converse } from "../_support/converse.ts";
import { REPO, sandbox } from "../_support/sandbox.ts";

const REQUESTS = [
  { jsonrpc: "2.0", id: 1, method: "tools/list" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "shoal_pty_list" } },
];

/** Runs main.ts with the given Deno flags, returning the frames by id and stderr. */
function runFacade(flags: string[], env: Record<string, string>, args: string[] = []) {
  const main = ["run", ...flags, `--config=${REPO}/deno.json`, `${REPO}/main.ts`, ...args];
  return converse(Deno.execPath(), main, env, REQUESTS);
}

function errorMessage(frame: Record<string, unknown> | undefined): string {
  return ((frame?.error ?? {}) as { message?: string }).message ?? "";
}

Deno.test("M-PERM-4: a socket outside the granted one makes the kernel unavailable naming unix:<path>", async () => {
  const box = await sandbox();
  try {
    const granted = box.socket("granted");
    const other = `${box.dir}/other.sock`;
    const { code, frames } = await runFacade(
      localFlags(granted, "/nonexistent/shoal-kernel", box.socketRoot),
      box.env(),
      ["--socket", other],
    );
    assert.equal(code, 0);
    assert.equal((frames.get(1)?.result as { tools: unknown[] }).tools.length, 13);
    assert.equal((frames.get(2)?.error as { code: number }).code, -32603);
    assert.match(
      errorMessage(frames.get(2)),
      new RegExp(`^kernel unavailable: permission denied for unix:${other}`),
    );
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-PERM-4: a denied kernel spawn makes the kernel unavailable naming run:<kernel>", async () => {
  const box = await sandbox();
  try {
    const socket = box.socket();
    const { code, frames } = await runFacade(
      localFlags(socket, "/nonexistent/shoal-kernel", box.socketRoot),
      box.env({ SHOAL_KERNEL: "/bin/true" }),
    );
    assert.equal(code, 0);
    assert.match(
      errorMessage(frames.get(2)),
      /^kernel unavailable: permission denied for run:\/bin\/true/,
    );
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-PERM-4: denied env and uid reads count as unset with one warning per name", async () => {
  const box = await sandbox();
  try {
    const env = box.env({ SHOAL_NO_AUTOSTART: "1" });
    delete (env as Record<string, string>).XDG_RUNTIME_DIR;
    const { code, frames, stderr } = await runFacade(
      ["--no-prompt", "--allow-env=SHOAL_NO_AUTOSTART"],
      env,
    );
    assert.equal(code, 0);
    assert.equal((frames.get(1)?.result as { tools: unknown[] }).tools.length, 13);
    assert.match(errorMessage(frames.get(2)), /^kernel unavailable: permission denied for sys:uid/);
    for (
      const name of [
        "SHOAL_SOCKET",
        "SHOAL_SESSION",
        "SHOAL_TOKEN",
        "SHOAL_KERNEL",
        "XDG_RUNTIME_DIR",
        "TMPDIR",
      ]
    ) {
      const warnings = stderr.split("\n").filter((l) => l.includes(`cannot read ${name} `));
      assert.equal(warnings.length, 1, name);
    }
  } finally {
    await box.cleanup();
  }
});

Deno.test({
  name:
    "M-PERM-1/M-PERM-3 the facade reads exactly the environment M-PERM-1 names [ignored: needs a SPEC decision: M-PERM-1 grants env access to eight names and M-PERM-3 gives the release 'the env and sys lists of M-PERM-1', but the local and release flags also grant PATH (named in M-PERM-4's unavailable reason, for a release whose kernel PATH does not find) and SHOAL_PROJECT (the project M-ONB-1's printed configuration carries, since issue 33); the SPEC should list them or the facade drop them]",
  ignore: true,
  fn: () => {
    const env = releaseFlags().find((flag) => flag.startsWith("--allow-env="));
    assert.deepEqual(
      env?.slice("--allow-env=".length).split(",").sort(),
      [
        "SHOAL_SOCKET",
        "SHOAL_SESSION",
        "SHOAL_TOKEN",
        "SHOAL_NO_AUTOSTART",
        "SHOAL_KERNEL",
        "XDG_RUNTIME_DIR",
        "TMPDIR",
        "HOME",
      ].sort(),
    );
  },
});
