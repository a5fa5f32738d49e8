// Test fixture: writes finished journal rows in a loop until killed, printing each finished id.
import { Journal } from "../../../src/kernel/journal/journal.ts";

const journal = Journal.open(Deno.args[0]);
const encoder = new TextEncoder();
for (let i = 0; i < 1_000_000; i++) {
  const id = journal.start({
    session: "work",
    principal: "uid:1000",
    ts_ns: 1767225600000000000n + BigInt(i),
    cwd: encoder.encode("/tmp"),
    src: `echo ${i}`,
    effects: [{ kind: "proc_spawn", argv0: "echo", bin_hash: null }],
  });
  const event = journal.finish(id, {
    dur_ns: 1000n,
    status: 0,
    ok: true,
    outputs: [],
  });
  Deno.stdout.writeSync(encoder.encode(`${id} ${event.seq}\n`));
}
