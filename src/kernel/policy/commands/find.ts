/** find: its starting points; actions that write or run programs are opaque. */
import { type ArgValue, type CommandIO, eachPath } from "./command_io.ts";

const FIND_ACTIONS = new Set([
  // Reads the starting points from a file.
  "-files0-from",
  "-delete",
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
]);

/** find primaries taking one argument. */
const FIND_UNARY = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-lname",
  "-ilname",
  "-type",
  "-xtype",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-perm",
  "-size",
  "-mtime",
  "-atime",
  "-ctime",
  "-mmin",
  "-amin",
  "-cmin",
  "-used",
  "-newer",
  "-anewer",
  "-cnewer",
  "-samefile",
  "-maxdepth",
  "-mindepth",
  "-links",
  "-inum",
  "-fstype",
  "-printf",
  "-context",
  "-regextype",
]);

/** find: reads its starting points; actions that delete, write or run programs are opaque. */
export function find(args: ArgValue[], io: CommandIO): void {
  let i = 0;
  // the last of -H, -L, -P wins; -L (or -follow) descends through the links below the roots
  let follows = false;
  while (i < args.length && args[i].text !== null && /^-([HLP]|O\d*|D)$/.test(args[i].text!)) {
    if (/^-[HLP]$/.test(args[i].text!)) follows = args[i].text === "-L";
    i += args[i].text === "-D" ? 2 : 1;
  }
  const roots: ArgValue[] = [];
  for (; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      if (!args[i].single || args[i].prefix === "" || args[i].prefix.startsWith("-")) {
        io.opaque("dynamic argument");
        return;
      }
      roots.push(args[i]);
      continue;
    }
    if (/^[-(!),]/.test(text) && text !== "-") break;
    roots.push(args[i]);
  }
  for (; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      io.opaque("dynamic find expression");
      return;
    }
    if (text === "-follow") follows = true;
    if (FIND_ACTIONS.has(text)) {
      io.opaque(`find ${text}`);
      return;
    }
    if (FIND_UNARY.has(text) || /^-newer[amcBt]{2}$/.test(text)) {
      const value = args[i + 1];
      if (value !== undefined && value.text === null && !value.single) {
        io.opaque("dynamic find expression");
        return;
      }
      i++;
    }
  }
  if (roots.length === 0) io.cwd("fs_read");
  eachPath(io, "fs_read", roots);
  if (follows && roots.length === 0) io.followedTree(null);
  if (follows) { for (const root of roots) io.followedTree(root); }
}

// ---- copying, moving, deleting, creating ------------------------------------------------------
