import { dirname } from "node:path";
import type { SocketChoice } from "../../protocol/socket_path.ts";
import type { ServeArgs } from "../cli/serve_args.ts";
import { bashOwnVariables } from "../bash/shell_state.ts";
import type { Kernel as StartedKernel } from "./kernel.ts";
import { findOnPath, probeSandbox } from "../sandbox/probe.ts";
import { ownBwrap } from "../sandbox/own_bwrap.ts";
import { keptLauncher } from "../sandbox/compiled_launcher.ts";
import { heapCompaction, KERNEL_COMPACTION_GROWTH } from "../../protocol/heap_compaction.ts";
import { startIdleWork } from "../../protocol/idle_work.ts";
import { mallocTrim } from "./idle_trim.ts";
import { resolvedPath } from "./resolved_path.ts";
import { gitIdentityFile, listGitIdentity } from "../sandbox/git_identity.ts";
import { gitExcludesFile } from "../sandbox/git_excludes.ts";
import { type PreparedSocket, StartupError } from "./socket_prep.ts";
import { keepSocket } from "./socket_keeper.ts";

/**
 * Starts the kernel on its bound socket (`serve.ts`) and serves until SIGINT/SIGTERM; returns the
 * exit status. The sandbox probe, bash's own variables and the human's git identity run while the
 * kernel's modules load (issue 33: their processes then cost the first exec nothing); a facade's
 * attach waits in the socket's backlog meanwhile. `resolvedBash` is the bash (K-CLI-1) that
 * `serve.ts` started looking for before this module loaded.
 */
export async function serveBound(
  opts: ServeArgs,
  stateDir: string,
  socket: SocketChoice,
  uid: number,
  prepared: PreparedSocket,
  resolvedBash: Promise<string>,
): Promise<number> {
  const env = Deno.env.toObject();
  let bash;
  try {
    bash = await resolvedBash;
  } catch (e) {
    throw new StartupError(1, e instanceof Error ? e.message : String(e));
  }
  // The sandbox probe (~130 ms of bwrap and perl), bash's own variables and the human's git
  // identity start as soon as bash is known, before the kernel's modules load: the first attach
  // waits for them. The probe's steps wait while modules load: with the imports started
  // first, it began only once they had all loaded (issue 33: start to ready 12 ms shorter with
  // the cores to itself, 84 ms with both busy; paired medians of 20 starts). Its sandbox starts
  // while the policy's and the journal's modules load, and its runs there while the kernel's do.
  // Its sandbox is started by the launcher an earlier kernel compiled, as the residents' are, and
  // goes in the background.
  const launcher = keptLauncher(`${stateDir}/tmp`);
  const probe = probeSandbox(env.PATH ?? "", bash, Deno.build.os, launcher);
  const ownCopy = ownBwrap(findOnPath("bwrap", env.PATH ?? ""));
  const ownVariables = bashOwnVariables(bash);
  const answers = Promise.all([probe.host, ownVariables, listGitIdentity(env)]);
  answers.catch(() => {}); // awaited below; a start that fails first leaves it unread
  const [
    { defaultPolicy, loadPolicyFile, startupPolicyPath, userPolicyPath },
    { PolicyWatch },
    { Journal },
  ] = await Promise.all([
    import("../policy/leash.ts"),
    import("../policy/policy_watch.ts"),
    import("../journal/journal.ts"),
  ]);
  const policyPath = startupPolicyPath(opts.policy ?? null, env);
  let policy;
  try {
    policy = policyPath === null ? defaultPolicy() : loadPolicyFile(policyPath);
  } catch (e) {
    throw new StartupError(1, e instanceof Error ? e.message : String(e));
  }
  // Watched even when absent at startup: `--print-config` may create it later (M-ONB-1). Where
  // it resolves now, as the state directory: a symlink on the way, replaced later, changes neither.
  const policyFile = opts.policy ?? userPolicyPath(env);
  const watchedPolicy = policyFile === null ? null : resolvedPath(policyFile);
  let started: StartedKernel | null = null;
  const watch = new PolicyWatch(
    watchedPolicy,
    policy,
    // not `started?.log(line) ?? …`: log returns nothing, so every line was printed twice
    (line) => started === null ? console.error(`shoal-kernel: ${line}`) : started.log(line),
  );
  await Deno.mkdir(`${stateDir}/tmp`, { recursive: true, mode: 0o700 });
  const state = Deno.realPathSync(stateDir);
  const journal = Journal.open(state);
  const cwd = Deno.cwd();
  // No turn of the event loop comes while modules load: the probe's runs waited for the
  // kernel's ~200 modules, then the first attach for them (issue 33). Loaded once they have
  // started, its runs go on meanwhile.
  await probe.started;
  const [{ Kernel }, { acceptLoop }] = await Promise.all([
    import("./kernel.ts"),
    import("./accept_loop.ts"),
  ]);
  const [host, bashVariables, gitListing] = await answers;
  const ownHost = await ownCopy(host);
  const kernel = await Kernel.start({
    stateDir: state,
    socketPath: socket.path,
    bash,
    bashVariables,
    localHuman: `uid:${uid}`,
    home: env.HOME || undefined,
    get policy() {
      return watch.current();
    },
    sandbox: {
      // its own copy where the agent's uid owns bwrap: /proc/1/exe inside leads to the file run
      host: ownHost,
      home: env.HOME || undefined,
      masked: [state, dirname(socket.path), ...(watchedPolicy === null ? [] : [watchedPolicy])],
      gitIdentity: gitIdentityFile(state, gitListing),
      gitExcludes: gitExcludesFile(state),
    },
    initialState: () => ({
      cwd,
      env: new Map(Object.entries(env)),
      vars: new Map(),
      funcs: new Map(),
      aliases: new Map(),
    }),
  }, journal);
  started = kernel;
  const stop = new AbortController();
  Deno.addSignalListener("SIGTERM", () => stop.abort());
  Deno.addSignalListener("SIGINT", () => stop.abort());
  const compact = heapCompaction(KERNEL_COMPACTION_GROWTH);
  const trim = mallocTrim();
  const stopIdleWork = startIdleWork(() => {
    journal.checkpoint();
    compact?.();
    trim?.();
  });
  kernel.log(`ready ${socket.path}`);
  const loops = [acceptLoop(kernel, prepared.listener, stop.signal)];
  const keeper = keepSocket(
    prepared,
    socket.path,
    (listener) => loops.push(acceptLoop(kernel, listener, stop.signal)),
    (line) => kernel.log(line),
  );
  await loops[0];
  await keeper.stop();
  await Promise.all(loops);
  stopIdleWork();
  await kernel.shutdown();
  return 0;
}
