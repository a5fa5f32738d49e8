import assert from "node:assert/strict";
import { expandHome, userConfigFiles } from "../../../src/kernel/sandbox/git_config.ts";

Deno.test("the user's git config files are git's, in git's order, as the environment names them", () => {
  const files = (env: Record<string, string>) => userConfigFiles((name) => env[name]);
  assert.deepEqual(files({ HOME: "/h" }), [
    "/etc/gitconfig",
    "/h/.config/git/config",
    "/h/.gitconfig",
  ]);
  assert.deepEqual(files({ HOME: "/h", XDG_CONFIG_HOME: "/x", GIT_CONFIG_NOSYSTEM: "1" }), [
    "/x/git/config",
    "/h/.gitconfig",
  ]);
  assert.deepEqual(files({ HOME: "/h", GIT_CONFIG_SYSTEM: "/s", GIT_CONFIG_GLOBAL: "/g" }), [
    "/s",
    "/g",
  ]);
  assert.deepEqual(files({ HOME: "", XDG_CONFIG_HOME: "" }), ["/etc/gitconfig"], "empty is unset");
});

Deno.test("a config path under ~ is expanded as git expands it: ~ and ~/ to HOME, ~user/ to that user's home in /etc/passwd, an unknown user's to nothing", () => {
  assert.equal(expandHome("~/proj/hooks", "/h"), "/h/proj/hooks");
  assert.equal(expandHome("~", "/h"), "/h");
  assert.equal(expandHome("hooks/~/x", "/h"), "hooks/~/x");
  const rootHome = Deno.readTextFileSync("/etc/passwd").split("\n").map((l) => l.split(":"))
    .find((f) => f[0] === "root")?.[5];
  if (rootHome !== undefined) assert.equal(expandHome("~root/x", "/h"), `${rootHome}/x`);
  assert.equal(expandHome("~no-such-user-here/x", "/h"), null);
});
