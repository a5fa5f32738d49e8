/** Finding a bash of version 4.4 or later (K-CLI-1), where Linux and macOS keep one. */

/** Where bash is looked for before PATH: the system on Linux; Homebrew (arm64, x86_64) and MacPorts on macOS. */
export function fixedBashPaths(os: string): string[] {
  return os === "darwin"
    ? ["/opt/homebrew/bin/bash", "/usr/local/bin/bash", "/opt/local/bin/bash"]
    : ["/bin/bash", "/usr/bin/bash"];
}

/** The fixed paths of `os`, then `bash` in each absolute directory of `path`, without repeats. */
export function bashCandidates(os: string, path: string | undefined): string[] {
  const onPath = (path ?? "").split(":").filter((dir) => dir.startsWith("/")).map((dir) =>
    `${dir.replace(/\/+$/, "")}/bash`
  );
  return [...new Set([...fixedBashPaths(os), ...onPath])];
}

/** What a candidate is: its [major, minor] version, or why it cannot be run. */
export async function bashVersion(bash: string): Promise<[number, number] | string> {
  try {
    const out = await new Deno.Command(bash, {
      args: ["-c", 'echo "${BASH_VERSINFO[0]} ${BASH_VERSINFO[1]}"'],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    const [major, minor] = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
    if (!Number.isInteger(major) || !Number.isInteger(minor)) return "not bash";
    return [major, minor];
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? "missing" : "cannot run";
  }
}

function recentEnough(v: [number, number] | string): v is [number, number] {
  return typeof v !== "string" && (v[0] > 4 || (v[0] === 4 && v[1] >= 4));
}

const HOW_TO_INSTALL = "install bash 4.4 or later (macOS: `brew install bash` with Homebrew, or " +
  "`sudo port install bash` with MacPorts; Linux: your package manager, e.g. `apt-get install bash`) " +
  "or pass --bash PATH";

/**
 * The bash to use: `flag` when given (it must be 4.4 or later), else the first candidate that is
 * 4.4 or later. Throws an Error that lists what was tried and how to install bash.
 */
export async function resolveBash(
  flag: string | undefined,
  candidates: string[],
): Promise<string> {
  if (flag) {
    const v = await bashVersion(flag);
    if (recentEnough(v)) return flag;
    const what = typeof v === "string" ? v : `bash ${v[0]}.${v[1]}`;
    throw new Error(`--bash ${flag} is ${what}; 4.4 or later needed`);
  }
  const tried: string[] = [];
  for (const bash of candidates) {
    const v = await bashVersion(bash);
    if (recentEnough(v)) return bash;
    if (v !== "missing") tried.push(`${bash} (${typeof v === "string" ? v : `${v[0]}.${v[1]}`})`);
  }
  const found = tried.length > 0 ? `only ${tried.join(", ")}` : "none";
  throw new Error(`no bash 4.4 or later found (${found}); ${HOW_TO_INSTALL}`);
}
