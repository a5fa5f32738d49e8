// Issue 33: the facade loads only its own modules: no npm package (the MCP SDK's types are erased,
// which lets bin/shoal-mcp run it without deno.json) and no `node:` module, whose compatibility
// layer stays resident (3-5 MiB).
import assert from "node:assert/strict";
import { REPO } from "../_support/sandbox.ts";

Deno.test("the facade's module graph holds only its own files: no npm package, no node: module", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--no-config", "--no-lock", `${REPO}/main.ts`],
    stderr: "inherit",
  }).output();
  assert.ok(out.success);
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string; error?: string }[];
  };
  const foreign = info.modules.filter((m) => !m.specifier.startsWith(`file://${REPO}/`) || m.error);
  assert.deepEqual(foreign, []);
  assert.ok(info.modules.length > 10, `${info.modules.length} modules`);
});
