import assert from "node:assert/strict";
import { userConfigFiles } from "../../../src/kernel/sandbox/git_config.ts";

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
