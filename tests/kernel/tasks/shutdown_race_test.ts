/** Kernel shutdown stops every run, also one whose exec was under way when it began (K-BASH-13, G-SOCK-8). */
import { shutdownDuring } from "../../_support/shutdown_race.ts";

/** A command that ignores SIGHUP and SIGTERM and runs until killed; `marker` names it in its command line. */
const stubborn = (marker: string) =>
  `sh -c 'trap "" HUP TERM; while :; do sleep 1; done' ${marker}`;

Deno.test("K-BASH-13/G-SOCK-8 an exec under way when the kernel is told to stop leaves no program running after the kernel exits (it started after every run was cancelled)", async () => {
  // an exec whose source takes a while to analyse; a run started before keeps the shutdown's
  // cancelling busy for its 2 s grace meanwhile
  const many = Array.from({ length: 20000 }, (_, i) => `: a${i}`).join("\n");
  await shutdownDuring(
    (conn, marker) => conn.request("exec", { src: stubborn(marker), async: true }),
    (conn, marker) => conn.request("exec", { src: `${stubborn(marker)} &\n${many}`, async: true }),
    "a run's program",
  );
});
