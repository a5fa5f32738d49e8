// P-SBX-7: an agent's changes to variables that make a program run code or load it never apply
// to the local human's execs in the same session (the ones below were missing from the list).
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** What each variable makes the human's program run or load, as the agent would set it. */
const CHANNELS: Record<string, string> = {
  // wine runs the loader and server it names, and loads DLLs from the prefix (native ones first
  // where the overrides say so): the agent's code as the human at their next `wine setup.exe`
  WINELOADER: "evil/wine",
  WINESERVER: "evil/wineserver",
  WINEPREFIX: "evil/prefix",
  WINEDLLOVERRIDES: "kernel32=n",
  // cvs runs CVSEDITOR for a commit message, and CVS_SERVER as the server of a :fork: root
  CVSEDITOR: "evil/editor",
  CVS_SERVER: "evil/server",
  // programs other tools run outright, or the configuration that names the programs they run
  DARCS_SCP: "evil/scp",
  DARCS_SFTP: "evil/sftp",
  DIFFPROG: "evil/diff",
  SWIFT_EXEC: "evil/swiftc",
  CYPRESS_RUN_BINARY: "evil/cypress",
  CONTAINERS_CONF: "evil/containers.conf",
  CONTAINERS_STORAGE_CONF: "evil/storage.conf",
  // start-up commands and plugins: gvim, mailcap users, coverage.py, matplotlib
  GVIMINIT: "evil/gviminit",
  MAILCAPS: "evil/mailcap",
  COVERAGE_PROCESS_START: "evil/coveragerc",
  COVERAGE_RCFILE: "evil/coveragerc",
  MPLBACKEND: "evil/backend",
  // extensions, module paths and openers: VS Code, Raku, Dart, Nim, nnn, lf, terminal launchers
  VSCODE_EXTENSIONS: "evil/extensions",
  VSCODE_PORTABLE: "evil/portable",
  RAKULIB: "evil/raku",
  PUB_CACHE: "evil/pub",
  DART_SDK: "evil/dart",
  NIM_LIB: "evil/nim",
  NNN_OPENER: "evil/open",
  OPENER: "evil/open",
  TERMINAL: "evil/term",
  // the justfile whose recipes the human's `just build` runs
  JUST_JUSTFILE: "evil/justfile",
  // modules ts-node requires, a native library and a program Prisma loads and runs
  TS_NODE_COMPILER: "evil/compiler.js",
  TS_NODE_PROJECT: "evil/tsconfig.json",
  PRISMA_QUERY_ENGINE_LIBRARY: "evil/engine.so.node",
  PRISMA_SCHEMA_ENGINE_BINARY: "evil/schema-engine",
};

hostTest(
  `P-SBX-7 an agent's ${
    Object.keys(CHANNELS).join(", ")
  } never reach the human's exec in the session (wine and cvs run or load what they name, as the human); the agent's own execs keep them`,
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const token = (await createToken(box, "agent:a", "a")).secret;
    const k = await startKernel(
      ["--policy", await writePolicy(box, { "agent:a": PROJECT_AGENT })],
      box,
      {},
    );
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const names = Object.keys(CHANNELS);
      const exports = names.map((name) => `export ${name}=${proj}/${CHANNELS[name]}`);
      await exec(agent, exports.join("\n"));
      const show = names.map((name) => `echo "${name}=\${${name}-unset}"`).join("\n");
      const seen = ((await exec(human, show, { position: "value" })).value as Rec).out as Rec;
      assert.equal(seen.v, names.map((name) => `${name}=unset\n`).join(""));
      const own = ((await exec(agent, show, { position: "value" })).value as Rec).out as Rec;
      assert.equal(own.v, names.map((name) => `${name}=${proj}/${CHANNELS[name]}\n`).join(""));
      human.close();
      agent.close();
    } finally {
      await k.cleanup();
    }
  },
);
