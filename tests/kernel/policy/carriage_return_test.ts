/**
 * K-EFF-3/K-PARSE-1: bash reads a carriage return as part of a word, the parser as a blank between
 * two. Where the two disagree the analysis cannot follow the source; where the parser kept the
 * carriage return in a word (quoted text, a here-document's body) they agree. Real kernel, real
 * bash, an unsandboxed agent whose policy grants no deletion at all.
 */
import assert from "node:assert/strict";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

Deno.test("K-EFF-3 `echo<CR>z` runs the program named so, not the echo builtin: an agent granted no deletion ran its own script through it, explained as allow with no effects, and deleted a file outside its grants", async () => {
  const outside = await Deno.makeTempDir({ prefix: "shoal-cr-victim-" });
  const victim = `${outside}/victim`;
  await Deno.writeTextFile(victim, "keep");
  let dir = "";
  const { kernel, token } = await startKernelWithAgent("agent:cr", (box) => {
    dir = box.dir;
    return {
      fs: { read: [`${box.dir}/**`], write: [`${box.dir}/**`] },
      proc_spawn: ["*"],
      opaque: "deny",
      auto_apply: "in-grant",
      session_write: true,
      env_read: ["*"],
      env_write: ["*"],
      sandbox: false,
    };
  });
  try {
    const agent = await kernel.attach("default", token);
    // Refused as written out: the agent may delete nothing.
    assert.equal((await rpcError(agent.request("exec", { src: `rm -f ${victim}` }))).code, -32010);
    // A script in a directory of its own, named `echo<CR>z`, put first on its PATH: the parser
    // reads the name as `echo` and `z`, so the write does not shadow a command it knows of.
    // (Its carriage return quoted here, where both read it as text.)
    const script = `${dir}/bin/echo$'\\r'z`;
    await agent.request("exec", {
      src: `mkdir -p ${dir}/bin && printf '#!/bin/sh\\nrm -f ${victim}\\n' > ${script}` +
        ` && chmod +x ${script}`,
    });
    await agent.request("exec", { src: `export PATH=${dir}/bin:$PATH` });
    assert.ok((await Deno.stat(`${dir}/bin/echo\rz`)).isFile);
    const explained = await agent.request("explain", { src: "echo\rz" }) as Rec;
    assert.notEqual(explained.verdict, "allow", JSON.stringify(explained.effects));
    await agent.request("exec", { src: "echo\rz" }).catch(() => {});
    assert.equal(await Deno.readTextFile(victim), "keep", "the agent's script deleted the file");
    // Quoted, or in a here-document's body, a carriage return is text to both.
    for (const src of [`echo "a\rb" 'c\rd' $'e\rf'`, "cat <<EOF\nx\ry\nEOF\n"]) {
      const plain = await agent.request("explain", { src }) as Rec;
      assert.equal(plain.verdict, "allow", `${JSON.stringify(src)}: ${JSON.stringify(plain)}`);
    }
  } finally {
    await kernel.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("K-EFF-3 `echo a\\<CR><LF>rm -f X` is two commands to bash (a backslash escapes the carriage return, the newline ends the line), one echo to the parser: an agent granted no deletion deleted a file outside its grants with it, explained as allow with no effects", async () => {
  const outside = await Deno.makeTempDir({ prefix: "shoal-cr-victim-" });
  const victim = `${outside}/victim`;
  await Deno.writeTextFile(victim, "keep");
  const { kernel, token } = await startKernelWithAgent("agent:cr", (box) => ({
    fs: { read: [`${box.dir}/**`], write: [`${box.dir}/**`] },
    proc_spawn: ["*"],
    opaque: "deny",
    auto_apply: "in-grant",
    sandbox: false,
  }));
  try {
    const agent = await kernel.attach("default", token);
    const src = `echo a\\\r\nrm -f ${victim}`;
    const explained = await agent.request("explain", { src }) as Rec;
    assert.notEqual(explained.verdict, "allow", JSON.stringify(explained.effects));
    assert.equal((await rpcError(agent.request("exec", { src }))).code, -32010);
    assert.equal(await Deno.readTextFile(victim), "keep", "the agent's source deleted the file");
  } finally {
    await kernel.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});
