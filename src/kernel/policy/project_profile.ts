/**
 * The built-in `project` profile (M-ONB-2) and granting it in the user's policy file: a new
 * file is written whole, an existing one is edited in place so its comments and formatting stay
 * (M-ONB-1).
 */
import { applyEdits, type FormattingOptions, modify, parseTree } from "jsonc-parser";
import { parsePolicyText } from "./leash.ts";

/** The policy entry of the `project` profile on `dir` (an absolute path). */
export function projectEntry(dir: string): Record<string, unknown> {
  const glob = `${dir}/**`;
  return {
    fs: { read: [glob], write: [glob], delete: [glob] },
    proc_spawn: ["*"],
    opaque: "allow",
    auto_apply: "in-grant",
    session_write: true,
    env_read: ["*"],
    env_write: ["*"],
    net_connect: [],
    sandbox: true,
    approve_in_client: true,
  };
}

/** A policy text with `principal` granted the project profile on `dir`, and what changed. */
export interface ProjectGrant {
  text: string;
  /** One line saying what was added, or null when the text already granted it. */
  change: string | null;
}

const FORMAT: FormattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" };

const FS_FIELDS = ["read", "write", "delete"] as const;

/**
 * Grants `principal` the project profile on `dir` in the policy `text` of the file at `path`
 * (null: no file yet). A principal already listed keeps every field it has and gains only the
 * `DIR/**` globs it lacks. Throws, naming the file, when `text` is not a valid policy.
 */
export function grantProject(
  text: string | null,
  path: string,
  principal: string,
  dir: string,
): ProjectGrant {
  const glob = `${dir}/**`;
  if (text === null) {
    const doc = { principal: { [principal]: projectEntry(dir) } };
    return {
      text: `// shoal policy (see README, "Connecting a client"); edit freely.\n${
        oneLineLists(JSON.stringify(doc, null, 2))
      }\n`,
      change: `created ${path}: ${principal} may work in ${dir} (project profile)`,
    };
  }
  const entry = parsePolicyText(text, path).principals.get(principal);
  if (entry === undefined) {
    const edits = modify(text, ["principal", principal], projectEntry(dir), {
      formattingOptions: FORMAT,
    });
    return {
      text: checked(applyEdits(text, edits), path),
      change: `added ${principal} to ${path}: it may work in ${dir} (project profile)`,
    };
  }
  const have = { read: entry.fs_read, write: entry.fs_write, delete: entry.fs_delete };
  let out = text;
  for (const field of FS_FIELDS) {
    if (have[field].includes(glob)) continue;
    const edits = modify(out, [...fsListPath(out, principal, field), -1], glob, {
      formattingOptions: FORMAT,
      isArrayInsertion: true,
    });
    out = applyEdits(out, edits);
  }
  if (out === text) return { text, change: null };
  return {
    text: checked(out, path),
    change: `granted ${principal} the project ${dir} in ${path}`,
  };
}

/** Pretty JSON with each list of strings on one line, as people write them. */
function oneLineLists(json: string): string {
  return json.replace(
    /\[\n\s+("(?:[^"\\\n]|\\.)*"(?:,\n\s+"(?:[^"\\\n]|\\.)*")*)\n\s+\]/g,
    (_, items: string) => `[${items.replace(/,\n\s+/g, ", ")}]`,
  );
}

/** Where the entry keeps its `fs.<field>` list: the flat spelling when the file uses it, else nested. */
function fsListPath(text: string, principal: string, field: string): (string | number)[] {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const entry = root?.children
    ?.find((p) => p.children?.[0]?.value === "principal")?.children?.[1]
    ?.children?.find((p) => p.children?.[0]?.value === principal)?.children?.[1];
  const flat = entry?.children?.some((p) => p.children?.[0]?.value === `fs.${field}`);
  return flat ? ["principal", principal, `fs.${field}`] : ["principal", principal, "fs", field];
}

/** `text` when it is a valid policy; an edit that broke it is a bug, reported before anything is written. */
function checked(text: string, path: string): string {
  parsePolicyText(text, path);
  return text;
}
