/**
 * Network by destination (SPEC §7.9, P-NET-1..2): a sandboxed token principal reaches exactly its
 * granted `host:port`s through the kernel's proxy, with real bwrap, real curl, python3, git and
 * the real kernel; servers listen on loopback only (127.0.0.1, 127.0.0.2).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { rpcError } from "../../_support/rejection.ts";
import { screenWhenDone } from "../../_support/pty_screen.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { selfSignedCert } from "../../_support/tls.ts";
import { waitUntil } from "../../_support/wait.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";

/** An agent that may run anything in its project, with `net` as its `net_connect` grants. */
function agent(net: string[]): Rec {
  return { ...PROJECT_AGENT, net_connect: net };
}

/** The local servers of a test: HTTP and HTTPS on 127.0.0.2, a git repository, a raw TCP port. */
interface Servers {
  http: number;
  https: number;
  /** A raw TCP server on 127.0.0.1 that answers `pong` to every connection. */
  raw: number;
  /** A raw TCP server on ::1 that answers `six`. */
  raw6: number;
  /** A raw TCP server on 127.0.0.1 that sends back what it reads, and closes after its EOF. */
  echo: number;
  /** A raw TCP server on 127.0.0.2 that keeps the first line each connection sends, in `heard`. */
  listening: number;
  heard: string[];
  /** The CA file curl and python trust for the HTTPS server (its self-signed certificate). */
  cert: string;
}

async function run(cmd: string, args: string[], cwd?: string): Promise<void> {
  const r = await new Deno.Command(cmd, { args, cwd, stdout: "null", stderr: "piped" }).output();
  if (!r.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(r.stderr)}`);
  }
}

/** Serves `root` (files) over HTTP on 127.0.0.2, plus `/hello` and a fake npm registry document. */
function handler(root: string): (req: Request) => Promise<Response> {
  return async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/hello") return new Response("hello\n");
    if (path === "/registry/tiny-pkg") {
      return Response.json({
        name: "tiny-pkg",
        "dist-tags": { latest: "1.0.0" },
        versions: { "1.0.0": { name: "tiny-pkg", version: "1.0.0" } },
      });
    }
    try {
      return new Response(await Deno.readFile(`${root}${decodeURIComponent(path)}`));
    } catch {
      return new Response("not found\n", { status: 404 });
    }
  };
}

async function withServers(dir: string, body: (s: Servers) => Promise<void>): Promise<void> {
  // a bare repository served over dumb HTTP
  await run("git", ["init", "-q", "--bare", `${dir}/www/repo.git`]);
  await run("git", ["init", "-q", `${dir}/work`]);
  await Deno.writeTextFile(`${dir}/work/README`, "from the proxy\n");
  await run("git", ["-C", `${dir}/work`, "add", "README"]);
  await run("git", [
    "-C",
    `${dir}/work`,
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@t",
    "commit",
    "-qm",
    "one",
  ]);
  await run("git", ["-C", `${dir}/work`, "push", "-q", `${dir}/www/repo.git`, "HEAD:master"]);
  await run("git", ["-C", `${dir}/www/repo.git`, "update-server-info"]);
  await selfSignedCert(dir, "127.0.0.2");
  const serve = handler(`${dir}/www`);
  const quiet = { onListen: () => {} };
  const http = Deno.serve({ hostname: "127.0.0.2", port: 0, ...quiet }, serve);
  const https = Deno.serve({
    hostname: "127.0.0.2",
    port: 0,
    cert: await Deno.readTextFile(`${dir}/cert.pem`),
    key: await Deno.readTextFile(`${dir}/key.pem`),
    ...quiet,
  }, serve);
  const answering = (hostname: string, answer: string) => {
    const listener = Deno.listen({ hostname, port: 0 });
    const accepting = (async () => {
      for await (const conn of listener) {
        conn.write(new TextEncoder().encode(answer)).finally(() => conn.close());
      }
    })().catch(() => {});
    return { listener, accepting, port: (listener.addr as Deno.NetAddr).port };
  };
  const raw = answering("127.0.0.1", "pong\n");
  const raw6 = answering("::1", "six\n");
  const echo = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const echoing = (async () => {
    for await (const conn of echo) conn.readable.pipeTo(conn.writable).catch(() => {});
  })().catch(() => {});
  const listening = Deno.listen({ hostname: "127.0.0.2", port: 0 });
  const heard: string[] = [];
  const hearing = (async () => {
    for await (const conn of listening) {
      const buf = new Uint8Array(256);
      conn.read(buf).then((n) => {
        heard.push(new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0]);
      }, () => {}).finally(() => conn.close());
    }
  })().catch(() => {});
  try {
    await body({
      http: http.addr.port,
      https: https.addr.port,
      raw: raw.port,
      raw6: raw6.port,
      echo: (echo.addr as Deno.NetAddr).port,
      listening: (listening.addr as Deno.NetAddr).port,
      heard,
      cert: `${dir}/cert.pem`,
    });
  } finally {
    raw.listener.close();
    raw6.listener.close();
    echo.close();
    listening.close();
    await Promise.all([
      hearing,
      http.shutdown(),
      https.shutdown(),
      raw.accepting,
      raw6.accepting,
      echoing,
    ]);
  }
}

interface World {
  k: TestKernel;
  box: Sandbox;
  proj: string;
  s: Servers;
  attach(principal: string): Promise<RpcConnection>;
}

async function world(
  principals: (s: Servers) => Rec,
  body: (w: World) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  let k: TestKernel | undefined;
  try {
    await withServers(box.dir, async (s) => {
      const policy = principals(s);
      const tokens: Record<string, string> = {};
      for (const p of Object.keys(policy)) tokens[p] = (await createToken(box, p, p)).secret;
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      await exec(await k.attach("work"), `cd ${proj}`);
      const kernel = k;
      await body({ k, box, proj, s, attach: (p) => kernel.attach("work", tokens[p]) });
    });
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/**
 * The outcome of `src` run in value position, hidden from the static analysis (an opaque `eval`,
 * which the agents' `opaque: allow` lets run): the sandbox's network is what is tested.
 */
async function outcome(conn: RpcConnection, src: string): Promise<Rec> {
  const hidden = `eval "$(echo ${btoa(src)} | base64 -d)"`;
  return (await exec(conn, hidden, { position: "value" })).value as Rec;
}

function text(value: unknown): string {
  return ((value as Rec).v as string) ?? "";
}

hostTest(
  "a principal granted one host:port reaches it with curl, python3 urllib, git and npm; nothing else gets out, and each refusal is in net_refused and on net.<session>",
  NEEDS_TIER_B,
  async () => {
    await world(
      (s) => ({ "agent:n": agent([`127.0.0.2:${s.http}`, `127.0.0.2:${s.https}`]) }),
      async (w) => {
        const conn = await w.attach("agent:n");
        const { http, https, raw, cert } = w.s;
        const cp = `cp ${cert} ${w.proj}/ca.pem`;
        await outcome(await w.k.attach("work"), cp);

        const viaCurl = await outcome(conn, `curl -sS http://127.0.0.2:${http}/hello`);
        assert.equal(text(viaCurl.out), "hello\n", text(viaCurl.err));
        assert.equal(viaCurl.net_refused, undefined);
        const tls = await outcome(
          conn,
          `curl -sS --cacert ca.pem https://127.0.0.2:${https}/hello`,
        );
        assert.equal(text(tls.out), "hello\n", text(tls.err));
        const py = await outcome(
          conn,
          `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.2:${http}/hello').read().decode(), end='')"`,
        );
        assert.equal(text(py.out), "hello\n", text(py.err));
        const git = await outcome(
          conn,
          `git clone -q http://127.0.0.2:${http}/repo.git cloned && cat cloned/README`,
        );
        assert.equal(text(git.out), "from the proxy\n", text(git.err));
        // the clone's .git changed the view (P-SBX-6): the next run starts in a new sandbox,
        // perhaps entering it before its launcher has a spare, and still gets the proxy
        const entered = await outcome(conn, `echo "$http_proxy $npm_config_proxy"`);
        assert.match(text(entered.out), /^http:\/\/127\.0\.0\.1:\d+ http:\/\/127\.0\.0\.1:\d+\n$/);
        const npm = await outcome(
          conn,
          `HOME=$PWD npm view --registry http://127.0.0.2:${http}/registry/ tiny-pkg version`,
        );
        assert.equal(text(npm.out).trim(), "1.0.0", text(npm.err));

        // the proxy variables were the run's only: the session does not keep them
        const env = await outcome(conn, `echo "[\${HTTP_PROXY-unset}]"`);
        assert.match(text(env.out), /^\[http:\/\/127\.0\.0\.1:\d+\]\n$/);
        const human = await w.k.attach("work");
        const after = await outcome(human, `echo "[\${HTTP_PROXY-unset}]"`);
        assert.equal(text(after.out), "[unset]\n");

        // another port, another name, an IP spelled otherwise: refused by the proxy
        const refused = await outcome(
          conn,
          `curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.2:${raw}/; ` +
            `curl -sS -o /dev/null -w '%{http_code}\\n' http://localhost:${http}/; ` +
            `curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:${http}/; ` +
            `curl -sS --socks5-hostname 127.0.0.1:\${HTTP_PROXY##*:} http://localhost:${https}/ ; ` +
            `curl -sS -o /dev/null -w '%{http_code}\\n' http://2130706434:${http}/hello`,
        );
        assert.equal(
          text(refused.out).split("\n").filter((l) => l !== "").join(" "),
          "403 403 403 200",
        );
        assert.match(text(refused.err), /not allowed|refused|SOCKS/i);
        assert.deepEqual(
          [...(refused.net_refused as string[])].sort(),
          [`127.0.0.1:${http}`, `127.0.0.2:${raw}`, `localhost:${http}`, `localhost:${https}`]
            .sort(),
        );
        const events = await conn.request("events.read", { channel: "net.work" }) as Rec;
        const payloads = (events.events as Rec[]).map((e) => e.payload as Rec);
        assert.ok(
          payloads.some((p) =>
            p.principal === "agent:n" && p.host === "localhost" && p.port === http &&
            typeof p.at === "number"
          ),
          JSON.stringify(payloads),
        );
        assert.equal(payloads.length, 4);
        // the same principal's connection to another session does not see them (K-EVT-8)
        const elsewhere = await w.k.attach(
          "elsewhere",
          (await createToken(w.box, "agent:n")).secret,
        );
        const unseen = await elsewhere.request("events.read", { channel: "net.work" }) as Rec;
        assert.deepEqual(unseen.events, []);

        // raw TCP, UDP and IPv6 that ignore the proxy have no route
        const rawTcp = await outcome(
          conn,
          `(exec 3<>/dev/tcp/127.0.0.2/${http}) 2>&1 && echo bash-open; ` +
            `python3 -c "import socket; socket.create_connection(('127.0.0.2', ${http}), 3); print('py-open')" 2>&1; ` +
            `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.2', 53)); s.settimeout(1); s.recvfrom(10); print('udp-answered')" 2>&1; ` +
            `python3 -c "import socket; socket.create_connection(('::1', ${http}), 3); print('v6-open')" 2>&1; ` +
            `getent hosts example.com || echo no-dns`,
        );
        const out = text(rawTcp.out);
        for (const opened of ["bash-open", "py-open", "udp-answered", "v6-open"]) {
          assert.ok(!out.includes(opened), out);
        }
        assert.match(out, /no-dns/);
      },
    );
  },
);

hostTest(
  "P-NET-1 a granted name that resolves to loopback is refused before any connection is made: the host's service hears nothing, and an open port and a closed one get the same 403 (no port scan of the host's loopback through a wildcard grant)",
  NEEDS_TIER_B,
  async () => {
    const service = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const open = service.addr.port;
    let accepted = 0;
    const accepting = (async () => {
      for await (const conn of service) {
        accepted++;
        conn.close();
      }
    })().catch(() => {});
    const gone = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const closed = gone.addr.port;
    gone.close();
    try {
      await world(() => ({ "agent:d": agent([`*:${open}`, `*:${closed}`]) }), async (w) => {
        const r = await outcome(
          await w.attach("agent:d"),
          `curl -sS -o /dev/null -w '%{http_code}\\n' http://localhost:${open}/; ` +
            `curl -sS -o /dev/null -w '%{http_code}\\n' http://localhost:${closed}/`,
        );
        assert.equal(text(r.out), "403\n403\n", text(r.err));
        assert.deepEqual(r.net_refused, [`localhost:${open}`, `localhost:${closed}`]);
        // the refusal says why: the name is granted, the address it leads to is not
        const said = await outcome(
          await w.attach("agent:d"),
          `curl -sS http://localhost:${open}/`,
        );
        assert.equal(
          text(said.out),
          `shoal: localhost:${open} resolves to 127.0.0.1, which a name may lead to only when a net_connect grant of agent:d names that address\n`,
        );
        assert.equal(accepted, 0, "the host's loopback service heard a connection");
      });
    } finally {
      service.close();
      await accepting;
    }
  },
);

hostTest(
  "P-NET-2 a SOCKS5 name that is no host is named escaped in net_refused and on net.<session>: the bytes a client sent cannot pass for a granted destination or carry terminal controls",
  NEEDS_TIER_B,
  async () => {
    await world((s) => ({ "agent:l": agent([`127.0.0.2:${s.http}`]) }), async (w) => {
      // ESC [2K erases the line on a terminal, CR goes back to its start: shown raw, the
      // refusal would read "ok:80"
      const name = "github.com:443 \\x1b[2K\\rok";
      const conn = await w.attach("agent:l");
      const r = await outcome(
        conn,
        `python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', int('\${HTTP_PROXY##*:}')), 5)
s.sendall(b'\\x05\\x01\\x00'); s.recv(2)
name = b'${name}'
s.sendall(b'\\x05\\x01\\x00\\x03' + bytes([len(name)]) + name + b'\\x00\\x50')
print('reply', s.recv(10)[1])
"`,
      );
      assert.equal(text(r.out), "reply 2\n", text(r.err));
      const shown = "github.com%3A443%20%1B%5B2K%0Dok";
      assert.deepEqual(r.net_refused, [`${shown}:80`]);
      const events = await conn.request("events.read", { channel: "net.work" }) as Rec;
      assert.deepEqual((events.events as Rec[]).map((e) => (e.payload as Rec).host), [shown]);
    });
  },
);

hostTest(
  "P-NET-1 AF_VSOCK, which no network namespace isolates (the guest side of virtio-vsock stays global even where Linux 7.0 namespaces vsock), is no route out past the proxy: a socket of it cannot be made in a sandbox, with or without net_connect grants",
  NEEDS_TIER_B,
  async () => {
    await world(
      (s) => ({ "agent:v": agent([`127.0.0.2:${s.http}`]), "agent:c": agent([]) }),
      async (w) => {
        // made only, never connected: CID 2 is the hypervisor of whatever VM runs the test
        const src = `python3 -c "
import socket
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('vsock made')
except OSError as e:
    print('vsock', e.strerror)
"`;
        for (const principal of ["agent:v", "agent:c"]) {
          const r = await outcome(await w.attach(principal), src);
          assert.equal(
            text(r.out),
            "vsock Operation not permitted\n",
            `${principal}: ${text(r.err)}`,
          );
        }
      },
    );
  },
);

hostTest(
  "M-ONB-3, P-NET-1: a principal with no net_connect grant has no route, only the proxy, which refuses every destination by name (before, no proxy: an unknown host or a refused connection naming nothing)",
  NEEDS_TIER_B,
  async () => {
    await world(() => ({ "agent:c": agent([]) }), async (w) => {
      const conn = await w.attach("agent:c");
      const proxied = await outcome(
        conn,
        `curl -sS -m 5 -o /dev/null -w 'code %{http_code}\n' http://127.0.0.2:${w.s.http}/hello`,
      );
      assert.equal(text(proxied.out), "code 403\n", text(proxied.err));
      assert.deepEqual(proxied.net_refused, [`127.0.0.2:${w.s.http}`]);
      const raw = await outcome(conn, `exec 3<>/dev/tcp/127.0.0.2/${w.s.http}`);
      assert.equal(raw.ok, false);
      assert.match(text(raw.err), /Network is unreachable|Connection refused/);
    });
  },
);

hostTest(
  "a loopback grant with an explicit port is forwarded as raw TCP; a port-wildcard loopback grant is not",
  NEEDS_TIER_B,
  async () => {
    await world(
      (s) => ({
        "agent:f": agent([`127.0.0.1:${s.raw}`]),
        "agent:w": agent(["127.0.0.1:*"]),
        "agent:6": agent([`[::1]:${s.raw6}`, `localhost:${s.raw}`]),
      }),
      async (w) => {
        const src =
          `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ${w.s.raw}), 5); print(s.recv(10).decode(), end='')"`;
        const forwarded = await outcome(await w.attach("agent:f"), src);
        assert.equal(text(forwarded.out), "pong\n", text(forwarded.err));
        const bash = await outcome(
          await w.attach("agent:f"),
          `exec 3<>/dev/tcp/127.0.0.1/${w.s.raw}; head -c 5 <&3`,
        );
        assert.equal(text(bash.out), "pong\n", text(bash.err));
        const wildcard = await outcome(await w.attach("agent:w"), src);
        assert.equal(wildcard.ok, false);
        assert.match(text(wildcard.err), /Connection refused/);
        // IPv6 loopback and the name localhost, each granted with its port
        const six = await outcome(
          await w.attach("agent:6"),
          `python3 -c "import socket; s=socket.create_connection(('::1', ${w.s.raw6}), 5); print(s.recv(10).decode(), end='')"; ` +
            `python3 -c "import socket; s=socket.create_connection(('localhost', ${w.s.raw}), 5); print(s.recv(10).decode(), end='')"`,
        );
        assert.equal(text(six.out), "six\npong\n", text(six.err));
      },
    );
  },
);

hostTest(
  "P-SBX-3 the forwarder's relay, the one process inside a sandbox without the socket filter, is undumpable: the agent's runs can neither read its memory nor ptrace it to open Unix sockets for them",
  NEEDS_TIER_B,
  async () => {
    await world((s) => ({ "agent:n": agent([`127.0.0.2:${s.http}`]) }), async (w) => {
      const conn = await w.attach("agent:n");
      const r = await outcome(
        conn,
        `python3 -c "
import os, socket
try:
    socket.socket(socket.AF_UNIX); print('unix ok')
except OSError as e:
    print('unix', e.strerror)
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    try:
        if open('/proc/%s/comm' % pid).read() != 'shoal-net-relay\\n': continue
        open('/proc/%s/mem' % pid, 'rb'); print('relay readable')
    except OSError as e:
        print('relay', e.strerror)
"`,
      );
      assert.equal(
        text(r.out),
        "unix Operation not permitted\nrelay Permission denied\n",
        text(r.err),
      );
    });
  },
);

hostTest(
  "git over ssh reaches a granted host:port through the proxy (ssh's ProxyCommand); another port is refused with a line naming it",
  NEEDS_TIER_B,
  async () => {
    await world(
      (s) => ({ "agent:s": agent([`127.0.0.2:${s.listening}`]) }),
      async (w) => {
        const conn = await w.attach("agent:s");
        const granted = await outcome(
          conn,
          `git ls-remote ssh://git@127.0.0.2:${w.s.listening}/repo.git`,
        );
        // the server heard ssh's banner: the connection left the sandbox through the proxy
        assert.match(w.s.heard.join("\n"), /^SSH-2\.0-/m, text(granted.err));
        const other = w.s.listening === 65535 ? 65534 : w.s.listening + 1;
        const refused = await outcome(conn, `git ls-remote ssh://git@127.0.0.2:${other}/repo.git`);
        assert.equal(refused.ok, false);
        assert.match(
          text(refused.err),
          new RegExp(
            `^shoal: 127\\.0\\.0\\.2:${other} is not in the net_connect grants of agent:s$`,
            "m",
          ),
        );
        assert.deepEqual(refused.net_refused, [`127.0.0.2:${other}`]);
      },
    );
  },
);

/**
 * Eight clients at once each send 4 MiB of random bytes to a port, half-close, and read every
 * byte back (a reader thread each, so neither side waits on the other); prints how many got
 * exactly what they sent, and how many forwarder processes were added while all were connected.
 */
const ECHO_CLIENTS = String.raw`
import os, socket, sys, threading
port, n, size = int(sys.argv[1]), 8, 4 << 20
ok, connected = [], threading.Barrier(n + 1)
def forwarders():
    found = 0
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            found += b'/dev/shoal-net/' in open('/proc/%s/cmdline' % pid, 'rb').read()
        except OSError:
            pass
    return found
def one():
    data = os.urandom(size)
    s = socket.create_connection(('127.0.0.1', port), 10)
    got = []
    def read():
        while True:
            b = s.recv(65536)
            if not b:
                return
            got.append(b)
    reader = threading.Thread(target=read)
    reader.start()
    connected.wait(30)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    reader.join(60)
    ok.append(b''.join(got) == data)
before = forwarders()
clients = [threading.Thread(target=one) for _ in range(n)]
for c in clients:
    c.start()
connected.wait(30)
added = forwarders() - before
for c in clients:
    c.join(90)
print(sum(ok), 'of', n, 'processes added', added)
`;

hostTest(
  "one forwarder process relays many connections at once, both ways with half-close: 8 clients each get back the 4 MiB they sent",
  NEEDS_TIER_B,
  async () => {
    await world((s) => ({ "agent:e": agent([`127.0.0.1:${s.echo}`]) }), async (w) => {
      await Deno.writeTextFile(`${w.proj}/clients.py`, ECHO_CLIENTS);
      const r = await outcome(await w.attach("agent:e"), `python3 clients.py ${w.s.echo}`);
      // one process relays them all: a fork per connection cost milliseconds before its first byte
      assert.equal(text(r.out), "8 of 8 processes added 0\n", text(r.err));
    });
  },
);

hostTest(
  "a run of an approved plan (plan.apply) goes through the proxy too: the approved connection works, another is refused",
  NEEDS_TIER_B,
  async () => {
    // a net_connect outside the grants is denied (P-EVAL-1), never approved: an approved plan's
    // connections are among the grants
    const asker = (s: Servers) => ({
      "agent:p": { ...agent([`127.0.0.2:${s.https}`]), auto_apply: "never" },
    });
    await world(asker, async (w) => {
      const { http, https, cert } = w.s;
      await Deno.copyFile(cert, `${w.proj}/ca.pem`);
      const other = `curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.2:${http}/hello`;
      const src = `curl -sS --cacert ca.pem https://127.0.0.2:${https}/hello; ` +
        `eval "$(echo ${btoa(other)} | base64 -d)"`;
      const conn = await w.attach("agent:p");
      const asked = await rpcError(exec(conn, src));
      assert.equal(asked.code, -32011);
      const planRef = (asked.data as Rec).plan_ref as string;
      const human = await w.k.attach("work");
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await conn.request("plan.apply", { plan_ref: planRef, position: "value" });
      const outcome = (applied as Rec).value as Rec;
      assert.equal(text(outcome.out), "hello\n403\n", text(outcome.err));
      assert.deepEqual(outcome.net_refused, [`127.0.0.2:${http}`]);
    });
  },
);

hostTest(
  "P-NET-1 the proxy socket of an approved plan's run (its grants plus what was approved) closes when the run's sandbox ends: a session of many approved runs keeps no listener or directory for each",
  NEEDS_TIER_B,
  async () => {
    const asker = { ...agent(["127.0.0.2:*"]), auto_apply: "never" };
    await world(() => ({ "agent:p": asker }), async (w) => {
      const sockets = () =>
        [...Deno.readDirSync(`${w.box.dir}/state/shoal/tmp`)]
          .filter((e) => e.name.startsWith("net-")).length;
      const conn = await w.attach("agent:p");
      const human = await w.k.attach("work");
      for (const port of [w.s.http, w.s.https, w.s.listening]) {
        const asked = await rpcError(exec(conn, `curl -sS -o /dev/null http://127.0.0.2:${port}/`));
        const planRef = (asked.data as Rec).plan_ref as string;
        await human.request("approval.grant", { plan_ref: planRef });
        await conn.request("plan.apply", { plan_ref: planRef, position: "value" });
      }
      // each run's sandbox goes a second after it ends, its socket with it; the one left is the
      // agent's own grants', held by the warm shell its next exec would run on
      await waitUntil(() => sockets() <= 1, 15_000);
      assert.ok(sockets() <= 1, `the approved runs' proxy sockets are still open: ${sockets()}`);
    });
  },
);

hostTest(
  "a PTY program of a granted principal reaches its destination through the proxy too",
  NEEDS_TIER_B,
  async () => {
    await world((s) => ({ "agent:t": agent([`127.0.0.2:${s.http}`]) }), async (w) => {
      const conn = await w.attach("agent:t");
      const script = `curl -sS http://127.0.0.2:${w.s.http}/hello; ` +
        `curl -sS -o /dev/null -w 'code %{http_code}\\n' http://127.0.0.2:${w.s.https}/; ` +
        `echo done; sleep 30`;
      const opened = await conn.request("pty.open", { cmd: "bash", args: ["-c", script] }) as Rec;
      const screen = await screenWhenDone(conn, opened.pty_id);
      await conn.request("pty.close", { pty_id: opened.pty_id });
      assert.deepEqual(screen.filter((row) => /^(hello|code)/.test(row)), ["hello", "code 403"]);
    });
  },
);

Deno.test("P-NET-1 a principal that opens and holds hundreds of proxy connections leaves the proxy to the others: its connections past its share are closed, another principal's CONNECT still goes through", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-proxy-share-" });
  const proxy = new NetProxy(dir, () => {});
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = server.addr.port;
  const serving = (async () => {
    for await (const conn of server) {
      await conn.write(new TextEncoder().encode("pong\n")).catch(() => {});
      conn.close();
    }
  })();
  const net = (principal: string) => ({
    principal,
    grants: [`127.0.0.1:${port}`],
    port: 3128,
    forwards: [],
  });
  const greedy = `${proxy.endpoint("one", net("agent:greedy")).dir}/${PROXY_SOCKET}`;
  const other = `${proxy.endpoint("two", net("agent:other")).dir}/${PROXY_SOCKET}`;
  const held: Deno.Conn[] = [];
  try {
    // more than the proxy relays at once: each waits for a request head that never comes
    for (let i = 0; i < 600; i++) {
      held.push(await Deno.connect({ transport: "unix", path: greedy }));
    }
    const conn = await Deno.connect({ transport: "unix", path: other });
    held.push(conn);
    await conn.write(new TextEncoder().encode(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`));
    let answer = "";
    const buf = new Uint8Array(1024);
    while (!answer.includes("pong")) {
      const n = await conn.read(buf);
      if (n === null) break;
      answer += new TextDecoder().decode(buf.subarray(0, n));
    }
    assert.match(answer, /^HTTP\/1.1 200 [^]*pong\n$/, "the other principal is served");
  } finally {
    for (const conn of held) conn.close();
    proxy.closeAll();
    server.close();
    await serving.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "P-NET-1 a net_connect grant the human removes from the policy file no longer reaches its destination, for an agent attached before the change too (M-ONB-1: its next exec runs under the edited policy)",
  fn: async () => {
    await world(
      (s) => ({ "agent:r": agent([`127.0.0.2:${s.http}`]) }),
      async (w) => {
        const conn = await w.attach("agent:r");
        const fetch =
          `curl -sS -o /dev/null -w 'code %{http_code}\\n' http://127.0.0.2:${w.s.http}/hello`;
        assert.equal(text((await outcome(conn, fetch)).out), "code 200\n");
        await writePolicy(w.box, { "agent:r": agent([`127.0.0.2:${w.s.https}`]) });
        const after = await outcome(conn, fetch);
        assert.equal(
          text(after.out),
          "code 403\n",
          "the removed grant still reached its destination",
        );
      },
    );
  },
});

hostTest(
  "M-ONB-3 a fetch the static layer cannot see, by a principal with no net_connect grant (the project profile), is refused naming the destination and the grant to add (it failed as the network does, naming neither)",
  NEEDS_TIER_B,
  async () => {
    await world(() => ({ "agent:n": agent([]) }), async (w) => {
      const conn = await w.attach("agent:n");
      const fetched = await outcome(
        conn,
        `python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.2:${w.s.http}/hello')"`,
      );
      assert.equal(fetched.ok, false);
      assert.deepEqual(fetched.net_refused, [`127.0.0.2:${w.s.http}`], text(fetched.err));
      assert.match(
        text(fetched.err),
        /127\.0\.0\.2:\d+ is not in the net_connect grants of agent:n/,
      );
    });
  },
);
