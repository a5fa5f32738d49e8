import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { TokenInputError } from "../../../src/kernel/auth/token_input.ts";
import { TokenStore } from "../../../src/kernel/auth/tokens.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const mode = (path: string) => Deno.statSync(path).mode! & 0o777;
const readStore = (dir: string) => JSON.parse(Deno.readTextFileSync(`${dir}/tokens.json`));

/** Replaces a file's text the way writers do: a new file renamed over the old one. */
function rewrite(path: string, text: string): void {
  Deno.writeTextFileSync(`${path}.edit`, text, { mode: 0o600 });
  Deno.renameSync(`${path}.edit`, path);
}

Deno.test("T-TOK-1/2 create writes a 0600 store with a key, and only the digest of the secret", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    const { id, secret } = store.create("agent:reviewer", "reviewer", ["fs.read"]);
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret, "base64url").length, 32);
    assert.equal(mode(`${dir}/tokens.json`), 0o600);
    const file = readStore(dir);
    assert.equal(file.version, 1);
    assert.equal(Buffer.from(file.key, "base64").length, 32);
    const digest = createHmac("sha256", Buffer.from(file.key, "base64")).update(secret)
      .digest("hex");
    assert.equal(id, digest.slice(0, 16));
    assert.deepEqual(Object.keys(file.tokens[0]).sort(), [
      "caps",
      "created_ns",
      "digest",
      "expires_ns",
      "id",
      "principal",
      "profile",
      "revoked_ns",
    ]);
    assert.equal(file.tokens[0].digest, digest);
    assert.equal(file.tokens[0].expires_ns, null);
    assert.equal(file.tokens[0].revoked_ns, null);
    assert.ok(!Deno.readTextFileSync(`${dir}/tokens.json`).includes(secret));
    // Only tokens.json and its lock file remain: no temp files.
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
      ["tokens.json", "tokens.json.lock"],
    );
    assert.equal(mode(`${dir}/tokens.json.lock`), 0o600);
  });
});

Deno.test("T-TOK-4 validate accepts the secret and rejects anything else", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    const { id, secret } = store.create("agent:a", "builder", ["fs.read", "net"]);
    store.create("agent:b", "other", []);
    assert.deepEqual(store.validate(secret), {
      id,
      principal: "agent:a",
      profile: "builder",
      caps: ["fs.read", "net"],
    });
    assert.equal(store.validate(secret.slice(0, 42) + (secret[42] === "A" ? "B" : "A")), null);
    assert.equal(store.validate(""), null);
    assert.equal(store.validate(id), null);
  });
});

Deno.test("T-TOK-4 a missing store validates nothing and is not created by reads", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    assert.equal(store.validate("x".repeat(43)), null);
    assert.deepEqual(store.list(), []);
    assert.throws(() => store.revoke("0123456789abcdef"), /unknown token/);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  });
});

Deno.test("T-TOK-4 tokens created or revoked by another process are seen without reopening", async () => {
  await withTempDir((dir) => {
    const kernel = new TokenStore(dir);
    assert.equal(kernel.validate("x".repeat(43)), null);
    const first = new TokenStore(dir).create("agent:a", "p", []);
    assert.equal(kernel.validate(first.secret)?.principal, "agent:a");
    const second = new TokenStore(dir).create("agent:b", "p", []);
    assert.equal(kernel.validate(second.secret)?.principal, "agent:b");
    new TokenStore(dir).revoke(first.id);
    assert.equal(kernel.validate(first.secret), null);
    assert.equal(kernel.validate(second.secret)?.principal, "agent:b");
    assert.deepEqual(
      kernel.list().map((t) => [t.id, t.state]),
      [[first.id, "revoked"], [second.id, "active"]],
    );
  });
});

Deno.test("T-TOK-4 a secret validated before is checked against the store's current key", async () => {
  await withTempDir((dir) => {
    const kernel = new TokenStore(dir);
    const { secret } = kernel.create("agent:a", "p", []);
    assert.equal(kernel.validate(secret)?.principal, "agent:a");
    // The same rows under a new key: the stored digest is no longer the secret's HMAC.
    const store = readStore(dir);
    const key = Buffer.alloc(32, 7).toString("base64");
    rewrite(`${dir}/tokens.json`, JSON.stringify({ ...store, key }));
    assert.equal(kernel.validate(secret), null);
    // Rows whose digests are HMACs under the new key validate again.
    const digest = createHmac("sha256", Buffer.from(key, "base64")).update(secret).digest("hex");
    const tokens = store.tokens.map((t: object) => ({ ...t, digest }));
    rewrite(`${dir}/tokens.json`, JSON.stringify({ ...store, key, tokens }));
    assert.equal(kernel.validate(secret)?.principal, "agent:a");
  });
});

Deno.test("T-TOK-2 revoke marks a token revoked once; unknown ids are an error", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    const { id, secret } = store.create("agent:a", "p", []);
    store.revoke(id);
    const revokedAt = readStore(dir).tokens[0].revoked_ns;
    assert.equal(typeof revokedAt, "number");
    store.revoke(id);
    assert.equal(readStore(dir).tokens[0].revoked_ns, revokedAt);
    assert.equal(store.validate(secret), null);
    assert.throws(() => store.revoke("ffffffffffffffff"), /unknown token id: ffffffffffffffff/);
  });
});

Deno.test("T-TOK-2/4 ttl sets expires_ns exactly and expiry is checked on every validation", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    const { secret } = store.create("agent:a", "p", [], 3600);
    const text = Deno.readTextFileSync(`${dir}/tokens.json`);
    const created = BigInt(text.match(/"created_ns": (\d+)/)![1]);
    const expires = BigInt(text.match(/"expires_ns": (\d+)/)![1]);
    assert.equal(expires - created, 3600n * 1_000_000_000n);
    assert.equal(store.validate(secret)?.principal, "agent:a");
    assert.equal(store.list()[0].state, "active");
    // Move the expiry into the past by editing the file, as another process would.
    rewrite(
      `${dir}/tokens.json`,
      text.replace(`"expires_ns": ${expires}`, `"expires_ns": ${created + 1n}`),
    );
    assert.equal(store.validate(secret), null);
    assert.equal(store.list()[0].state, "expired");
    const short = store.create("agent:b", "p", [], 1);
    assert.equal(store.validate(short.secret)?.principal, "agent:b");
    assert.throws(() => store.create("agent:c", "p", [], 0), /ttl .*at least 1/);
    assert.throws(() => store.create("agent:c", "p", [], -1), /ttl/);
    assert.throws(() => store.create("", "p", []), /principal/);
  });
});

Deno.test("T-TOK-1 ns values above 2^53 in the store are kept exactly across rewrites", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    const { id } = store.create("agent:a", "p", []);
    const path = `${dir}/tokens.json`;
    rewrite(
      path,
      Deno.readTextFileSync(path).replace(/"created_ns": \d+/, '"created_ns": 1767225600123456789'),
    );
    store.create("agent:b", "p", []);
    assert.match(Deno.readTextFileSync(path), /"created_ns": 1767225600123456789,/);
    assert.equal(store.list().find((t) => t.id === id)?.created_ns, 1767225600123456789n);
  });
});

Deno.test("T-TOK-3 an existing store with looser permissions is tightened to 0600 on open", async () => {
  await withTempDir((dir) => {
    new TokenStore(dir).create("agent:a", "p", []);
    Deno.chmodSync(`${dir}/tokens.json`, 0o644);
    new TokenStore(dir);
    assert.equal(mode(`${dir}/tokens.json`), 0o600);
  });
});

Deno.test("K-CLI-2 principal and profile names are printable characters without whitespace", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    for (const bad of ["agent\nforged", "agent\tx", "agent x", "a\u00a0b", "a\u202eb", "a\x7fb"]) {
      assert.throws(() => store.create(bad, "p", []), TokenInputError, JSON.stringify(bad));
      assert.throws(() => store.create("agent:a", bad, []), TokenInputError, JSON.stringify(bad));
    }
    assert.deepEqual(store.list(), []);
    store.create("agent:é-ü_1@host", "reviewer", []);
    assert.equal(store.list()[0].principal, "agent:é-ü_1@host");
  });
});

Deno.test("T-TOK-1 a stored principal with a newline makes the store malformed (no forged list lines)", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    store.create("agent:a", "p", []);
    const path = `${dir}/tokens.json`;
    rewrite(path, Deno.readTextFileSync(path).replace('"agent:a"', '"agent:a\\nx\\ty"'));
    assert.throws(() => new TokenStore(dir), /malformed token store .*principal/);
  });
});

Deno.test("T-TOK-1 a malformed store is an error, never an open door", async () => {
  await withTempDir((dir) => {
    Deno.writeTextFileSync(`${dir}/tokens.json`, '{"version":1,"key":"short","tokens":[]}', {
      mode: 0o600,
    });
    assert.throws(() => new TokenStore(dir), /malformed token store/);
    Deno.writeTextFileSync(`${dir}/tokens.json`, "not json");
    assert.throws(() => new TokenStore(dir), /malformed token store/);
  });
});

Deno.test("T-TOK-1/3 members a newer shoal added to the store and to its records are kept by a create and a revoke of this version", async () => {
  await withTempDir((dir) => {
    const store = new TokenStore(dir);
    const { id, secret } = store.create("agent:a", "p", []);
    const path = `${dir}/tokens.json`;
    const newer = readStore(dir);
    newer.labels = { team: "ops" };
    newer.tokens[0].note = "laptop agent";
    newer.tokens[0].scopes = [{ dir: "/src" }];
    rewrite(path, JSON.stringify(newer));
    store.create("agent:b", "p", []);
    store.revoke(id);
    const kept = readStore(dir);
    assert.deepEqual(kept.labels, { team: "ops" });
    assert.equal(kept.tokens[0].note, "laptop agent");
    assert.deepEqual(kept.tokens[0].scopes, [{ dir: "/src" }]);
    assert.equal(kept.tokens[1].note, undefined);
    assert.equal(store.validate(secret), null);
  });
});

Deno.test("T-TOK-1 a store of a newer version is refused naming it as a newer shoal's, and left as it was", async () => {
  await withTempDir((dir) => {
    new TokenStore(dir).create("agent:a", "p", []);
    const path = `${dir}/tokens.json`;
    const newer = JSON.stringify({ ...readStore(dir), version: 2 });
    rewrite(path, newer);
    assert.throws(() => new TokenStore(dir), /version 2: written by a newer shoal/);
    assert.throws(() => new TokenStore(dir).create("agent:b", "p", []), /newer shoal/);
    assert.equal(Deno.readTextFileSync(path), newer);
  });
});

Deno.test({
  name:
    "T-TOK-1/K-CLI-2 a store the first shoal versions wrote with a token named 'agent:my bot' (names with spaces were accepted before 7a1a3b1) keeps its other tokens valid and that one revocable [ignored: needs a SPEC decision: today the whole store is malformed for this version, so the kernel exits 1 at start and 'token list', 'token revoke' and 'token create' all fail, leaving a hand edit of tokens.json as the only way back; T-TOK-1 does not say whether a stored record whose name this version refuses spoils the store or only itself (refused at attach, listed with its name escaped, revocable)]",
  ignore: true,
  fn: async () => {
    await withTempDir((dir) => {
      const store = new TokenStore(dir);
      const good = store.create("agent:rev", "reviewer", []);
      const old = store.create("agent:my", "profile", []);
      const path = `${dir}/tokens.json`;
      rewrite(path, Deno.readTextFileSync(path).replace('"agent:my"', '"agent:my bot"'));
      const reopened = new TokenStore(dir);
      assert.equal(reopened.validate(good.secret)?.principal, "agent:rev");
      assert.equal(reopened.list().length, 2);
      reopened.revoke(old.id);
      assert.equal(reopened.validate(old.secret), null);
      assert.equal(readStore(dir).tokens[1].principal, "agent:my bot");
    });
  },
});
