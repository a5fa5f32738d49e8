import { dirname } from "node:path";
import type { SocketChoice } from "../../protocol/socket_path.ts";
import type { ServeArgs } from "../cli/serve_args.ts";
import { bashCandidates, resolveBash } from "../bash/discover.ts";
import { bashOwnVariables } from "../bash/shell_state.ts";
import type { Kernel } from "./kernel.ts";
import type { Journal } from "../journal/journal.ts";
import { detectSandbox } from "../sandbox/probe.ts";
import { ownBwrap } from "../sandbox/own_bwrap.ts";
import { heapCompaction, KERNEL_COMPACTION_GROWTH } from "../../protocol/heap_compaction.ts";
import { startIdleWork } from "../../protocol/idle_work.ts";
import { mallocTrim } from "./idle_trim.ts";
import { resolvedPath } from "./resolved_path.ts";
import { gitIdentityFile, listGitIdentity } from "../sandbox/git_identity.ts";
import { prepareSocket, StartupError } from "./socket_prep.ts";
import { keepSocket } from "./socket_keeper.ts";
import { keepInheritedFromChildren } from "./inherited_fds.ts";

/**
 * Runs the daemon until SIGINT/SIGTERM; returns the exit status (G-SOCK-3..9). A fatal error
 * is also appended to the state directory's kernel.log when it can be (G-STATE-2): an
 * autostarted kernel's stderr is null (M-START-1), so its log was the one place left to say why
 * it exited. A kernel that lost the socket to another (status 3) has nothing to report.
 */
export async function serve(
  opts: ServeArgs,
  stateDir: string,
  socket: SocketChoice,
): Promise<number> {
  try {
    return await serveUntilStopped(opts, stateDir, socket);
  } catch (e) {
    if (!(e instanceof StartupError && e.status === 3)) {
      logFatal(stateDir, e instanceof Error ? e.message : String(e));
    }
    throw e;
  }
}

/** Appends `shoal-kernel: <message>` to `<stateDir>/kernel.log` if the directory exists. */
function logFatal(stateDir: string, message: string): void {
  try {
    const log = Deno.openSync(`${stateDir}/kernel.log`, {
      create: true,
      append: true,
      mode: 0o600,
    });
    try {
      log.writeSync(new TextEncoder().encode(`shoal-kernel: ${message}\n`));
    } finally {
      log.close();
    }
  } catch {
    // no state directory (yet), or it is unwritable: stderr has said it
  }
}

/**
 * {@link serve} itself. The sandbox probe and the question of bash's own variables run while the
 * kernel's modules load (issue 33: their processes then cost the first exec nothing).
 */
async function serveUntilStopped(
  opts: ServeArgs,
  stateDir: string,
  socket: SocketChoice,
): Promise<number> {
  Deno.env.delete("SHOAL_TOKEN");
  keepInheritedFromChildren();
  const env = Deno.env.toObject();
  const uid = Deno.uid() ?? 0;
  let bash;
  try {
    bash = await resolveBash(opts.bash, bashCandidates(Deno.build.os, env.PATH));
  } catch (e) {
    throw new StartupError(1, e instanceof Error ? e.message : String(e));
  }
  // The sandbox probe (~130 ms of bwrap and perl), bash's own variables and the human's git
  // identity start as soon as bash is known, before the rest of the kernel's modules load: the
  // first attach waits for them. The
  // probe's steps wait while modules evaluate: with the imports started first, it began only once
  // they had all loaded (issue 33: start to ready 12 ms shorter with the cores to itself, 84 ms
  // with both busy; paired medians of 20 starts).
  const probe = detectSandbox(env.PATH ?? "", bash);
  const ownVariables = bashOwnVariables(bash);
  const answers = Promise.all([probe, ownVariables, listGitIdentity(env)]);
  answers.catch(() => {}); // awaited below; a start that fails first leaves it unread
  // The leash's modules first, alone: the socket is bound once the policy has loaded, before the
  // other modules load, so a facade polling every 50 ms (M-START-1) has connected by the time the
  // kernel is ready (imported with the others, the bind waited for them all).
  // The journal's module with them: it is opened under the socket's lock, before the bind.
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
  let started: Kernel | null = null;
  const watch = new PolicyWatch(
    watchedPolicy,
    policy,
    // not `started?.log(line) ?? …`: log returns nothing, so every line was printed twice
    (line) => started === null ? console.error(`shoal-kernel: ${line}`) : started.log(line),
  );
  await Deno.mkdir(`${stateDir}/tmp`, { recursive: true, mode: 0o700 });
  const state = Deno.realPathSync(stateDir);
  let journal: Journal | undefined;
  const prepared = await prepareSocket(socket, uid, () => {
    journal = Journal.open(state);
  });
  const cwd = Deno.cwd();
  const [{ Kernel }, { acceptLoop }] = await Promise.all([
    import("./kernel.ts"),
    import("./accept_loop.ts"),
  ]);
  const [host, bashVariables, gitListing] = await answers;
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
      host: ownBwrap(host),
      home: env.HOME || undefined,
      masked: [state, dirname(socket.path), ...(watchedPolicy === null ? [] : [watchedPolicy])],
      gitIdentity: gitIdentityFile(state, gitListing),
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
  prepared.release();
  return 0;
}
