/**
 * The built-in `project` profile (M-ONB-2) and granting it in the user's policy file: a new
 * file is written whole, an existing one is edited in place so its comments and formatting stay
 * (M-ONB-1).
 */
import { applyEdits, findNodeAtLocation, type FormattingOptions, modify } from "jsonc-parser";
import { parseJsonc } from "./jsonc.ts";
import { BOM, givenFields, parsePolicyText, withoutBom } from "./leash.ts";

/** The policy entry of the `project` profile on `dir` (an absolute path). */
export function projectEntry(dir: string): Record<string, unknown> {
  const glob = `${dir}/**`;
  return {
    fs: { read: [glob], write: [glob], delete: [glob] },
    proc_spawn: ["*"],
    opaque: "allow",
    auto_apply: "in-grant",
    session_write: true,
    time: true,
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
  if (text.startsWith(BOM)) {
    // edited without the mark (jsonc-parser's edits would count it as a stray symbol), kept
    const grant = grantProject(withoutBom(text), path, principal, dir);
    return { ...grant, text: `${BOM}${grant.text}` };
  }
  const entry = parsePolicyText(text, path).principals.get(principal);
  if (entry === undefined) {
    return {
      text: checked(addPrincipal(text, principal, projectEntry(dir)), path),
      change: `added ${principal} to ${path}: it may work in ${dir} (project profile)`,
    };
  }
  const have = { read: entry.fs_read, write: entry.fs_write, delete: entry.fs_delete };
  let out = text;
  for (const field of FS_FIELDS) {
    if (!have[field].includes(glob)) out = appendGlob(out, principal, field, glob);
  }
  // An entry written by hand lacks what the printed configuration needs (session_write for its
  // cwd on attach, sandbox for the OS wall): it gains the profile's fields it does not set, in
  // any spelling, and keeps every one it does (M-ONB-2: the user's edits stay).
  const node = findNodeAtLocation(parseJsonc(text)!, ["principal", principal])!;
  const given = givenFields(node);
  const added: string[] = [];
  for (const [field, value] of Object.entries(projectEntry(dir))) {
    if (field === "fs" || given.has(field)) continue;
    out = addMember(out, ["principal", principal], field, value);
    added.push(field);
  }
  if (out === text) return { text, change: null };
  const also = added.length === 0
    ? ""
    : ` (added the project profile's ${added.join(", ")}, which its entry did not set)`;
  return {
    text: checked(out, path),
    change: `granted ${principal} the project ${dir} in ${path}${also}`,
  };
}

/** Pretty JSON with each list of strings on one line, as people write them. */
function oneLineLists(json: string): string {
  return json.replace(
    /\[\n\s+("(?:[^"\\\n]|\\.)*"(?:,\n\s+"(?:[^"\\\n]|\\.)*")*)\n\s+\]/g,
    (_, items: string) => `[${items.replace(/,\n\s+/g, ", ")}]`,
  );
}

/** jsonc-parser's own edit, which re-indents the lines around it: for layouts the others do not handle. */
function modified(text: string, path: (string | number)[], value: unknown, insert = false): string {
  const edits = modify(text, path, value, {
    formattingOptions: FORMAT,
    ...(insert ? { isArrayInsertion: true } : {}),
  });
  return applyEdits(text, edits);
}

/**
 * `text` with `"principal": entry` added as the last member of the `principal` object, on lines of
 * its own at the indentation of the member before it, so that every other byte, comments
 * included, stays where it was.
 */
function addPrincipal(text: string, principal: string, entry: unknown): string {
  return addMember(text, ["principal"], principal, entry);
}

/** The line end `text` uses: CRLF when it has one, else LF. */
function lineEnd(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

/**
 * `text` with `"key": value` added as the last member of the object at `path`: on the object's own
 * line when it is written on one line, else on lines of their own at the indentation of the member
 * before it; every other byte, comments included, stays where it was. Layouts this does not
 * handle go to jsonc-parser's edit, which re-indents the lines around it.
 */
function addMember(text: string, path: string[], key: string, value: unknown): string {
  const root = parseJsonc(text);
  const object = root === undefined ? undefined : findNodeAtLocation(root, path);
  if (object?.type !== "object") return modified(text, [...path, key], value);
  const nl = lineEnd(text);
  const last = object.children?.at(-1);
  const inner = text.slice(object.offset + 1, object.offset + object.length - 1);
  if (last === undefined) {
    if (/\S/.test(inner)) return modified(text, [...path, key], value); // a comment inside
    const member = `${JSON.stringify(key)}: ${oneLine(value)}`;
    return `${text.slice(0, object.offset + 1)}${member}${
      text.slice(object.offset + object.length - 1)
    }`;
  }
  const end = last.offset + last.length;
  if (!text.slice(object.offset, object.offset + object.length).includes("\n")) {
    const member = `${JSON.stringify(key)}: ${oneLine(value)}`;
    return `${text.slice(0, end)}, ${member}${text.slice(end)}`;
  }
  const lineStart = text.lastIndexOf("\n", last.offset) + 1;
  const indent = text.slice(lineStart, last.offset);
  const eol = text.indexOf("\n", end);
  if (lineStart === 0 || /\S/.test(indent) || eol === -1) {
    return modified(text, [...path, key], value);
  }
  const body = Array.isArray(value)
    ? oneLine(value)
    : oneLineLists(JSON.stringify(value, null, 2)).replaceAll("\n", `${nl}${indent}`);
  const member = `${indent}${JSON.stringify(key)}: ${body}`;
  if (/^[ \t]*,/.test(text.slice(end))) {
    return `${text.slice(0, eol + 1)}${member},${nl}${text.slice(eol + 1)}`;
  }
  return `${text.slice(0, end)},${text.slice(end, eol + 1)}${member}${nl}${text.slice(eol + 1)}`;
}

/** `value` as JSON on one line, spaced as people write it: `{"write": ["/p/**"]}`. */
function oneLine(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(oneLine).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`);
    return `{${members.join(", ")}}`;
  }
  return JSON.stringify(value);
}

/**
 * `text` with `glob` appended to the principal's `fs.<field>` list, in the spelling the entry
 * uses (flat `"fs.read"` or nested `fs.read`): after its last item on the same line, or on a
 * line of its own when the list has one item per line; an empty list becomes `["glob"]` and a
 * missing one is added as a member ({@link addMember}).
 */
function appendGlob(text: string, principal: string, field: string, glob: string): string {
  const root = parseJsonc(text)!;
  const entryPath = ["principal", principal];
  const entry = findNodeAtLocation(root, entryPath);
  const flatUsed = FS_FIELDS.some((f) => findNodeAtLocation(root, [...entryPath, `fs.${f}`]));
  const flat = findNodeAtLocation(root, [...entryPath, `fs.${field}`]);
  const nested = findNodeAtLocation(root, [...entryPath, "fs", field]);
  const list = flat ?? nested;
  if (list === undefined) {
    if (flatUsed || entry === undefined) return addMember(text, entryPath, `fs.${field}`, [glob]);
    const fs = findNodeAtLocation(root, [...entryPath, "fs"]);
    return fs === undefined
      ? addMember(text, entryPath, "fs", { [field]: [glob] })
      : addMember(text, [...entryPath, "fs"], field, [glob]);
  }
  const last = list.type === "array" ? list.children?.at(-1) : undefined;
  if (last === undefined) {
    const inside = text.slice(list.offset + 1, list.offset + list.length - 1);
    if (list.type !== "array" || /\S/.test(inside)) {
      const path = flat === undefined ? [...entryPath, "fs", field] : [...entryPath, `fs.${field}`];
      return modified(text, [...path, -1], glob, true);
    }
    return `${text.slice(0, list.offset)}[${JSON.stringify(glob)}]${
      text.slice(list.offset + list.length)
    }`;
  }
  const end = last.offset + last.length;
  const lineStart = text.lastIndexOf("\n", last.offset) + 1;
  const ownLine = lineStart > list.offset && !/\S/.test(text.slice(lineStart, last.offset));
  const separator = ownLine ? `,${lineEnd(text)}${text.slice(lineStart, last.offset)}` : ", ";
  return `${text.slice(0, end)}${separator}${JSON.stringify(glob)}${text.slice(end)}`;
}

/** `text` when it is a valid policy; an edit that broke it is a bug, reported before anything is written. */
function checked(text: string, path: string): string {
  parsePolicyText(text, path);
  return text;
}
