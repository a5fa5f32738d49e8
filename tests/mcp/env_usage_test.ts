/** M-CLI-1/2 through bin/shoal-mcp, as clients run it: a bad value of a variable is the usage error a bad flag is. */
import assert from "node:assert/strict";
import { REPO, sandbox } from "../_support/sandbox.ts";

Deno.test("M-CLI-1/2: SHOAL_SESSION or SHOAL_PROJECT holding what its flag may not is a usage error (exit 2 naming it), as the flag is, not a facade serving the wrong session without its permissions", async () => {
  const box = await sandbox();
  try {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SHOAL_SESSION: "a/b" }, /invalid session name: "a\/b"/],
      // A client configuration's JSON expands no tilde.
      [
        { SHOAL_PROJECT: "~/proj" },
        /SHOAL_PROJECT needs an absolute path when serving, got ~\/proj/,
      ],
    ];
    for (const [vars, named] of cases) {
      const out = await new Deno.Command(`${REPO}/bin/shoal-mcp`, {
        env: { ...box.env(), SHOAL_NO_AUTOSTART: "1", ...vars },
        clearEnv: true,
        stdin: "null",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 2, `${JSON.stringify(vars)}: ${stderr}`);
      assert.match(stderr, named);
      assert.match(stderr, /^usage: shoal-mcp /m);
      assert.doesNotMatch(stderr, /cannot read|permission denied/);
      assert.equal(out.stdout.length, 0);
    }
  } finally {
    await box.cleanup();
  }
});
