import assert from "node:assert/strict";
import { projectSession } from "../../src/protocol/project_session.ts";
import { SESSION_NAME } from "../../src/protocol/socket_path.ts";

Deno.test("M-ONB-1: a project's session name is its directory's name and a hash of its path, always a valid session name (K-ATTACH-1)", () => {
  assert.match(projectSession("/home/me/shoal"), /^shoal-[0-9a-f]{8}$/);
  assert.equal(projectSession("/home/me/shoal"), projectSession("/home/me/shoal"), "stable");
  assert.equal(projectSession("/home/me/shoal/"), projectSession("/home/me/shoal"));
  const paths = [
    "/home/me/shoal",
    "/home/you/shoal",
    "/srv/it's a $(dir) ünïcode",
    `/p/${"x".repeat(300)}`,
    "/",
    "/a/.hidden",
  ];
  const names = paths.map(projectSession);
  for (const name of names) assert.match(name, SESSION_NAME);
  assert.equal(new Set(names).size, paths.length, "another path, another session");
  assert.match(names[2], /^it_s_a___dir___n_code-[0-9a-f]{8}$/);
  assert.equal(names[3].length, 40 + 9);
  assert.match(names[4], /^root-[0-9a-f]{8}$/);
  // FNV-1a 32 of the UTF-8 path: a known value pins the function across releases
  assert.equal(projectSession("/a"), "a-70d2182d");
});
