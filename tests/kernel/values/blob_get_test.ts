import assert from "node:assert/strict";
import { blobGet } from "../../../src/kernel/values/blob_get.ts";
import { blobGetParams } from "../../../src/kernel/values/params.ts";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { withCas } from "./_fixtures.ts";

const encoder = new TextEncoder();

function isCode(code: number) {
  return (e: unknown) => e instanceof RpcError && e.code === code;
}

Deno.test("blob.get serves a text blob in chunks with next until the end (K-BLOB-2)", async () => {
  await withCas(async (cas) => {
    const hash = await cas.put(encoder.encode("total 8\nabc"));
    assert.deepEqual(await blobGet(cas, blobGetParams.parse({ hash })), {
      hash,
      len: 11,
      offset: 0,
      next: null,
      value: { $: "str", v: "total 8\nabc" },
    });
    const first = await blobGet(cas, blobGetParams.parse({ hash, length: 4 }));
    assert.deepEqual([first.value.v, first.next], ["tota", 4]);
    const last = await blobGet(cas, blobGetParams.parse({ hash: hash.slice(7), offset: 8 }));
    assert.deepEqual([last.value, last.next, last.hash], [{ $: "str", v: "abc" }, null, hash]);
    const end = await blobGet(cas, blobGetParams.parse({ hash, offset: 11 }));
    assert.deepEqual([end.value, end.next], [{ $: "str", v: "" }, null]);
  });
});

Deno.test("blob.get never decodes JSON and base64-encodes binary chunks (K-BLOB-2, V-CHUNK-1)", async () => {
  await withCas(async (cas) => {
    const json = await cas.put(encoder.encode('{"a":1}'));
    assert.deepEqual((await blobGet(cas, blobGetParams.parse({ hash: json }))).value, {
      $: "str",
      v: '{"a":1}',
    });
    const binary = await cas.put(new Uint8Array([0xff, 0x00, 0x61]));
    assert.deepEqual((await blobGet(cas, blobGetParams.parse({ hash: binary }))).value, {
      $: "bytes",
      v: "/wBh",
    });
  });
});

Deno.test("a chunk ending inside a character moves next back to the character (V-CHUNK-1)", async () => {
  await withCas(async (cas) => {
    const hash = await cas.put(encoder.encode("ab€cd"));
    const first = await blobGet(cas, blobGetParams.parse({ hash, length: 3 }));
    assert.deepEqual([first.value, first.next], [{ $: "str", v: "ab" }, 2]);
    const second = await blobGet(cas, blobGetParams.parse({ hash, offset: 2, length: 3 }));
    assert.deepEqual([second.value, second.next], [{ $: "str", v: "€" }, 5]);
  });
});

Deno.test("blob.get errors: unknown -32004, offset past the end -32005, bad hash -32602 (K-BLOB-1/3)", async () => {
  await withCas(async (cas) => {
    const hash = await cas.put(encoder.encode("abc"));
    await assert.rejects(
      blobGet(cas, blobGetParams.parse({ hash: "0".repeat(64) })),
      isCode(ErrorCode.UNKNOWN_REF),
    );
    await assert.rejects(
      blobGet(cas, blobGetParams.parse({ hash, offset: 4 })),
      isCode(ErrorCode.BAD_PATH_OR_SLICE),
    );
    await assert.rejects(
      blobGet(cas, { hash: "sha256:xyz", offset: 0, length: 1 }),
      isCode(ErrorCode.INVALID_PARAMS),
    );
  });
});

Deno.test("blob.get params: defaults, and length 1..65536, offset >= 0, hash form enforced", () => {
  const hash = "a".repeat(64);
  assert.deepEqual(blobGetParams.parse({ hash }), { hash, offset: 0, length: 65536 });
  for (
    const bad of [
      { hash, length: 0 },
      { hash, length: 65537 },
      { hash, offset: -1 },
      { hash, offset: 1.5 },
      { hash: "sha256:" + "A".repeat(64) },
      {},
    ]
  ) {
    assert.equal(blobGetParams.safeParse(bad).success, false, JSON.stringify(bad));
  }
});
