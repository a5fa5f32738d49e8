import assert from "node:assert/strict";
import { encodePathQuery, ValueUri } from "../../../src/kernel/values/uri.ts";
import { valueGetParams } from "../../../src/kernel/values/params.ts";
import { sliceParam } from "../../../src/mcp/resource_uri.ts";

Deno.test("paths are percent-encoded except A–Z a–z 0–9 - . _ ~ [ ] (K-VAL-2)", () => {
  assert.equal(encodePathQuery("Az09-._~[]"), "Az09-._~[]");
  assert.equal(
    encodePathQuery('.out["a b"]/é&=?#+%'),
    ".out[%22a%20b%22]%2F%C3%A9%26%3D%3F%23%2B%25",
  );
});

Deno.test("uris carry path and slice; suffixes follow V-ELIDE-3", () => {
  const base = new ValueUri("shoal://out/12");
  assert.equal(base.toString(), "shoal://out/12");
  assert.equal(base.field("out").toString(), "shoal://out/12?path=out");
  assert.equal(base.index(3).toString(), "shoal://out/12?path=[3]");
  const items = new ValueUri("shoal://out/12", "items[2]");
  assert.equal(items.field("out").toString(), "shoal://out/12?path=items[2].out");
  assert.equal(items.member("k").index(0).toString(), "shoal://out/12?path=items[2][%22k%22][0]");
  const sliced = new ValueUri("shoal://out/12", "out", [10, 20]);
  assert.equal(sliced.toString(), "shoal://out/12?path=out&slice=10..20");
  assert.equal(sliced.index(2).toString(), "shoal://out/12?path=out[12]");
  assert.equal(sliced.member("a").toString(), "shoal://out/12?path=out[10..20][%22a%22]");
  assert.equal(new ValueUri("shoal://out/1", "", [0, 5]).toString(), "shoal://out/1?slice=0..5");
});

Deno.test("the widest slice value.get accepts is written in digits a shoal:// reader parses (V-SLICE-1, M-RES-3)", () => {
  const widest = valueGetParams.parse({ ref: "out:1", slice: [0, Number.MAX_SAFE_INTEGER] });
  const uri = new ValueUri("shoal://out/1", "", widest.slice).toString();
  assert.equal(uri, "shoal://out/1?slice=0..9007199254740991");
  const query = new URLSearchParams(uri.split("?")[1]);
  assert.deepEqual(sliceParam(new Map(query)), [0, Number.MAX_SAFE_INTEGER]);
});
