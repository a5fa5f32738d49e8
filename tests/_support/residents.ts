/** Test support: a kernel's residents (P-SBX-4) over a fresh project, outside any kernel. */
import { runSandbox, type SandboxSetting } from "../../src/kernel/policy/principal_sandbox.ts";
import { Residents } from "../../src/kernel/sandbox/residents.ts";
import type { SandboxHost } from "../../src/kernel/sandbox/probe.ts";
import type { Sandboxing } from "../../src/kernel/sandbox/command.ts";
import { NetProxy } from "../../src/kernel/net/proxy.ts";
import { HOST_SANDBOX } from "./host.ts";
import { projectSandboxPolicy } from "./principals.ts";
import { withTempDir } from "./temp_dir.ts";

/** What {@link withResidents} gives a test. */
export interface ResidentsSetup {
  root: string;
  /** `<root>/home/proj`, the project its agent works in. */
  proj: string;
  residents: Residents;
  /** What agent:l's project policy sandboxes a run in `proj` with, computed now (P-SBX-3). */
  sandboxing(): Sandboxing;
}

/**
 * Runs `body` with Residents of `host` (runs started by a launcher when `launches`) over a fresh
 * `<root>/home/proj`, then closes every resident and removes the root.
 */
export async function withResidents(
  body: (s: ResidentsSetup) => Promise<void>,
  host: SandboxHost = HOST_SANDBOX,
  launches = true,
): Promise<void> {
  await withTempDir(async (root) => {
    const proj = `${root}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    const setting: SandboxSetting = {
      host,
      home: `${root}/home`,
      masked: [],
      gitIdentity: () => null,
      gitExcludes: () => null,
    };
    const policy = projectSandboxPolicy(proj);
    const residents = new Residents(
      host,
      "/bin/bash",
      root,
      new NetProxy(root, () => {}),
      () => {},
      launches,
    );
    // the project profile's agent, without the proxy every sandboxed principal gets (P-NET-1):
    // these runs are the launcher's and the residents', and their environment and processes
    // exactly theirs (the net tests drive the proxy)
    const sandboxing = (): Sandboxing => ({
      ...runSandbox(setting, policy, false, "agent:l", proj)!,
      net: null,
      afresh: sandboxing,
    });
    try {
      await body({ root, proj, residents, sandboxing });
    } finally {
      await residents.closeAll();
    }
  });
}
