/** Issue 17: the release smoke script, run here on `deno run` stand-ins under the release flags. */
import assert from "node:assert/strict";
import { installCheckout, smokeExec } from "../../scripts/release_smoke.ts";
import { REPO, sandbox } from "../_support/sandbox.ts";

Deno.test("release smoke: --version of both, then initialize and shoal_exec with autostart under a minimal env", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${REPO}/scripts/release_smoke.ts`],
    stdin: "null",
  }).output();
  const text = new TextDecoder();
  assert.equal(out.code, 0, text.decode(out.stderr));
  assert.match(
    text.decode(out.stdout),
    /^shoal-mcp \d+\.\d+\.\d+\nshoal-kernel \d+\.\d+\.\d+\ninitialize and shoal_exec with autostart under PATH=\/[^:]*\/shoal-smoke-bin-[^:]+:\/usr\/bin:\/bin: ok\n$/,
  );
});

Deno.test("M-PERM-4: without the kernel's directory on PATH autostart fails naming the kernel, the PATH and the fix", async () => {
  const install = await installCheckout();
  try {
    const run = await smokeExec(install, false);
    assert.equal(run.ok, false);
    const expected = new RegExp(
      String
        .raw`^kernel unavailable: (permission denied for run:shoal-kernel|cannot start kernel "shoal-kernel")` +
        String.raw`.*; searched PATH=/usr/bin:/bin; fix: .*set "env": \{"PATH": "[^"]*${REPO}/bin:`,
    );
    assert.match(run.exec, expected);
    const line = run.stderr.split("\n").find((l) => l.startsWith("shoal-mcp: kernel unavailable:"));
    assert.equal(line, `shoal-mcp: ${run.exec}`);
    const ran = await smokeExec(install, true);
    assert.deepEqual([ran.ok, ran.exec.trim()], [true, "smoke-42"]);
  } finally {
    await Deno.remove(install.dir, { recursive: true });
  }
});

Deno.test("M-PERM-3, M-ONB-1: under exactly the release flags --print-config provisions the agent through the shoal-kernel found on the PATH it started with, even when the PATH it prints would find another first (an install reached through a symlink, or run by its path)", async () => {
  const install = await installCheckout();
  const box = await sandbox();
  try {
    const project = `${box.dir}/home/proj`;
    await Deno.mkdir(project);
    const out = await new Deno.Command(`${install.dir}/shoal-mcp`, {
      args: ["--print-config", "claude-code", "--project", project],
      env: { ...box.env(), ...install.env, PATH: `${install.dir}:/usr/bin:/bin` },
      clearEnv: true,
      cwd: project,
      stdin: "null",
    }).output();
    const text = new TextDecoder();
    const stderr = text.decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.match(
      text.decode(out.stdout),
      /^cd \S+ && claude mcp add --scope local shoal .*--env SHOAL_TOKEN=[\w-]{43} /,
    );
    assert.match(
      await Deno.readTextFile(`${box.dir}/home/.config/shoal/leash.jsonc`),
      /agent:claude-code/,
    );
  } finally {
    await Deno.remove(install.dir, { recursive: true });
    await box.cleanup();
  }
});
