/** The synchronous SHA-256 that names the compiled launcher without node:crypto (issue 33). */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../../src/kernel/sandbox/sha256.ts";
import { LAUNCHER_C } from "../../../src/kernel/sandbox/launcher_c.ts";

Deno.test("sha256Hex is node:crypto's SHA-256 for every length across the padding boundaries, and of the launcher's source", () => {
  for (let length = 0; length <= 200; length++) {
    const bytes = new Uint8Array(length).map((_, i) => (i * 131 + length) & 0xff);
    assert.equal(sha256Hex(bytes), createHash("sha256").update(bytes).digest("hex"), `${length}`);
  }
  const source = new TextEncoder().encode(LAUNCHER_C);
  assert.equal(sha256Hex(source), createHash("sha256").update(source).digest("hex"));
});
