import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { kernelTest } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";

/**
 * Issue 13 (concurrency): under a burst of execs the kernel can deliver a ready pipe read seconds
 * after bash has exited and its group is gone, while the linger's timers keep firing. The linger
 * once took such a pipe for one held by an escaped descendant and cut it: the exec was ok with an
 * empty stdout. The race shows only under load, so this test makes 1,000 execs at once (10
 * sessions x 100): before the fix it failed 5 runs of 5, losing 7 outputs of 5,000 (load 12-16 on
 * 2 cores); on an idle machine it may pass either way.
 */
const SESSIONS = 10;
const EXECS = 100;

kernelTest(
  `K-BASH-3 ${SESSIONS} sessions x ${EXECS} execs at once: every exec gets exactly its own stdout`,
  async (k) => {
    const conns = await Promise.all(
      Array.from({ length: SESSIONS }, (_, s) => k.attach(`s${s}`)),
    );
    const outs = await Promise.all(
      conns.flatMap((conn, s) =>
        Array.from({ length: EXECS }, async (_, i) => {
          const v = (await exec(conn, `echo s${s}-${i}`)).value as Rec;
          return { want: `s${s}-${i}\n`, got: (v.out as Rec).v, ok: v.ok };
        })
      ),
    );
    assert.deepEqual(outs.filter((o) => o.got !== o.want || o.ok !== true), []);
  },
);
