import assert from "node:assert/strict";
import { maxSocketPathBytes, socketPath } from "../../src/protocol/socket_path.ts";

const LONGEST_NAME = "s".repeat(64);
const LARGEST_UID = 4294967294;

Deno.test("G-SOCK-1 Linux: explicit, XDG_RUNTIME_DIR, TMPDIR, /tmp in that order", () => {
  const env = { XDG_RUNTIME_DIR: "/run/user/1000", TMPDIR: "/var/tmp/" };
  assert.deepEqual(socketPath("a", "/x/y.sock", env, 1000, "linux"), {
    path: "/x/y.sock",
    explicit: true,
    root: "/",
  });
  assert.equal(socketPath("a", undefined, env, 1000, "linux").path, "/run/user/1000/shoal/a.sock");
  assert.equal(
    socketPath("a", undefined, { TMPDIR: "/var/tmp/" }, 1000, "linux").path,
    "/var/tmp/shoal-1000/shoal/a.sock",
  );
  assert.equal(
    socketPath("a", undefined, { TMPDIR: "/" }, 7, "linux").path,
    "/shoal-7/shoal/a.sock",
  );
  assert.equal(
    socketPath("a", undefined, { XDG_RUNTIME_DIR: "", TMPDIR: "" }, 7, "linux").path,
    "/tmp/shoal-7/shoal/a.sock",
  );
});

Deno.test("G-SOCK-1 macOS: /private/tmp/shoal-<uid>/S.sock whatever XDG_RUNTIME_DIR and TMPDIR say", () => {
  const env = { XDG_RUNTIME_DIR: "/run/user/501", TMPDIR: "/var/folders/zz/abcdefgh_12345678/T/" };
  assert.deepEqual(socketPath("default", undefined, env, 501, "darwin"), {
    path: "/private/tmp/shoal-501/default.sock",
    explicit: false,
    root: "/private/tmp",
  });
  assert.equal(
    socketPath("default", undefined, {}, 501, "darwin").path,
    "/private/tmp/shoal-501/default.sock",
  );
  assert.deepEqual(socketPath("a", "/x/y.sock", env, 501, "darwin"), {
    path: "/x/y.sock",
    explicit: true,
    root: "/",
  });
});

Deno.test("G-SOCK-1 every valid session name fits sun_path under the default directories", () => {
  for (const os of ["linux", "darwin"]) {
    const path = socketPath(LONGEST_NAME, undefined, {}, LARGEST_UID, os).path;
    assert.ok(new TextEncoder().encode(path).length <= maxSocketPathBytes(os), `${os}: ${path}`);
  }
  const xdg = socketPath(
    LONGEST_NAME,
    undefined,
    { XDG_RUNTIME_DIR: "/run/user/4294967294" },
    0,
    "linux",
  );
  assert.ok(xdg.path.length <= maxSocketPathBytes("linux"));
});

Deno.test("G-SOCK-1 a path over sun_path is refused with what to shorten", () => {
  const tmpdir = "/var/folders/zz/" + "d".repeat(40) + "/T";
  assert.throws(
    () => socketPath(LONGEST_NAME, undefined, { TMPDIR: tmpdir }, 1000, "linux"),
    /over the 107 a Unix socket allows: use a shorter session name or TMPDIR, or pass --socket/,
  );
  assert.throws(
    () => socketPath("a", "/" + "p".repeat(104), {}, 501, "darwin"),
    /is 105 bytes, over the 103 a Unix socket allows: use a shorter --socket path/,
  );
  // Exactly at the limit binds.
  assert.equal(socketPath("a", "/" + "p".repeat(102), {}, 501, "darwin").path.length, 103);
});
