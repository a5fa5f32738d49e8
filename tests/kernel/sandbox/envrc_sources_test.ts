/**
 * What a protected `.envrc` has direnv load (SPEC §7.8 P-SBX-6): direnv runs the files it sources
 * as it runs the `.envrc`, as the human, without asking again (`direnv allow` covers the `.envrc`
 * alone), so they stay read-only in the sandbox as the `.envrc` does.
 */
import assert from "node:assert/strict";
import { envrcSources } from "../../../src/kernel/sandbox/envrc_sources.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** Where direnv is, or null. */
function direnv(): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(`${dir}/direnv`).isFile) return `${dir}/direnv`;
    } catch {
      // not there
    }
  }
  return null;
}

Deno.test("the files a .envrc loads are its literal source_env, source_env_if_exists, dotenv and source words, relative to its directory; dynamic ones are not followed", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/shared`);
    await Deno.writeTextFile(
      `${dir}/.envrc`,
      [
        "source_env_if_exists .envrc.local",
        "dotenv",
        "dotenv_if_exists '.env.dev' # per machine",
        "source_env shared",
        'source "lib/env.sh"; export X=1',
        ". ~/team.sh",
        "source_env $HOME/x",
        'source "$ROOT/y"',
        "source lib/*.sh",
        "use flake",
        "# source_env commented",
        "[[ -f .envrc.mine ]] && source_env .envrc.mine",
        "if has nix; then source lib/nix.sh; fi",
      ].join("\n"),
    );
    assert.deepEqual(envrcSources(`${dir}/.envrc`, dir, "/h"), [
      `${dir}/.envrc.local`,
      `${dir}/.env`,
      `${dir}/.env.dev`,
      `${dir}/shared/.envrc`,
      `${dir}/lib/env.sh`,
      "/h/team.sh",
      `${dir}/.envrc.mine`,
      `${dir}/lib/nix.sh`,
    ]);
  });
});

hostTest(
  "P-SBX-6 a file the human's .envrc sources (source_env_if_exists .envrc.local, present or not, and dotenv_if_exists .env.local) is read-only like the .envrc: the agent wrote them and direnv ran its code as the human at the next load, without asking; the static layer asks approval before such a write",
  NEEDS_TIER_B,
  async () => {
    // with direnv installed, it is run too; without, what the agent could write is looked at
    const program = direnv();
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    try {
      const home = `${k.box.dir}/home`;
      const proj = `${home}/proj`;
      await Deno.mkdir(`${proj}/sub`, { recursive: true });
      await Deno.writeTextFile(
        `${proj}/.envrc`,
        "source_env_if_exists .envrc.local\ndotenv_if_exists .env.local\n",
      );
      await Deno.writeTextFile(`${proj}/sub/.envrc`, "source_env_if_exists .envrc.local\n");
      await Deno.writeTextFile(`${proj}/sub/.envrc.local`, "export MINE=1\n");
      const env = {
        HOME: home,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        XDG_DATA_HOME: `${home}/.local/share`,
        XDG_CONFIG_HOME: `${home}/.config`,
      };
      const run = async (args: string[], cwd: string) => {
        if (program === null) return 0;
        const command = new Deno.Command(program, {
          args,
          cwd,
          env,
          clearEnv: true,
          stderr: "null",
        });
        return (await command.output()).code;
      };
      for (const dir of [proj, `${proj}/sub`]) assert.equal(await run(["allow", "."], dir), 0);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      await Deno.writeTextFile(
        `${proj}/attack.sh`,
        [
          `(echo 'touch ${marker}' > .envrc.local) 2>/dev/null`,
          `(echo 'LD_PRELOAD=${marker}.so' > .env.local) 2>/dev/null`,
          `(echo 'touch ${marker}' >> sub/.envrc.local) 2>/dev/null`,
          "echo done",
        ].join("\n"),
      );
      const out = (await exec(agent, "sh attack.sh", { position: "value" })).value as Rec;
      assert.match(String((out.out as Rec)?.v), /done/);
      for (const dir of [proj, `${proj}/sub`]) await run(["exec", dir, "true"], home);
      let ran = true;
      try {
        Deno.statSync(marker);
      } catch {
        ran = false;
      }
      assert.equal(ran, false, "direnv ran the agent's code as the human");
      const text = (path: string) => {
        try {
          return Deno.readTextFileSync(path);
        } catch {
          return null;
        }
      };
      const written = [`${proj}/sub/.envrc.local`, `${proj}/.envrc.local`, `${proj}/.env.local`];
      // an absent one is held by an empty directory while the sandbox is up, which direnv passes over
      assert.deepEqual(written.map((path) => text(path) ?? ""), ["export MINE=1\n", "", ""]);
      try {
        await exec(agent, "echo x >> sub/.envrc.local");
        assert.fail("ran without approval");
      } catch (e) {
        assert.equal((e as { code?: number }).code, -32011, String(e));
      }
      // ordinary work goes on
      const made = (await exec(agent, "echo a > notes.md", { position: "value" })).value as Rec;
      assert.equal(made.ok, true);
    } finally {
      await k.cleanup();
      Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
    }
  },
);
