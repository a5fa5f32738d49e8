/** wget: the hosts it connects to and the files it writes. */
import { type ArgValue, type CommandIO, eachOutput, eachPath, STATIC } from "./command_io.ts";
import { hasOption, optionValues, parse } from "./_getopt.ts";
import { connectUrl } from "./url.ts";
import { WGET_FLAGS, WGET_OTHER_VALUES } from "./wget_options.ts";

/**
 * Options that run a program (`--use-askpass`), or write or read files named otherwise than as
 * given (`--warc-file=F` writes F.warc.gz), or at its own choosing.
 */
const WGET_UNFOLLOWED = [
  "use-askpass",
  "warc-file",
  "warc-dedup",
  "warc-cdx",
  "rejected-log",
  "hsts-file",
  "input-metalink",
  "crl-file",
];

/** wget: URLs it fetches and the files it writes. */
export function wget(args: ArgValue[], io: CommandIO): void {
  const spec = {
    short: "oaeiBtOTwQPUlARDIX",
    long: [
      "output-file",
      "append-output",
      "execute",
      "input-file",
      "base",
      "tries",
      "output-document",
      "timeout",
      "wait",
      "quota",
      "directory-prefix",
      "user-agent",
      "level",
      "accept",
      "reject",
      "domains",
      "include-directories",
      "exclude-directories",
      "post-data",
      "post-file",
      "body-data",
      "body-file",
      "method",
      "header",
      "user",
      "password",
      "http-user",
      "http-password",
      "load-cookies",
      "save-cookies",
      "config",
      "certificate",
      "private-key",
      "ca-certificate",
      "ca-directory",
      "bind-address",
      "limit-rate",
      "referer",
      ...WGET_UNFOLLOWED,
      ...WGET_OTHER_VALUES,
    ],
    flags: [
      "span-hosts",
      "force-directories",
      "recursive",
      "mirror",
      "page-requisites",
      "no-netrc",
      ...WGET_FLAGS,
    ],
  };
  const parsed = parse(args, spec, io);
  if (parsed === null) return;
  // any other option (wget2's, a later wget's) may name a file it writes
  const known = (name: string) => spec.long.includes(name) || spec.flags.includes(name);
  const unknown = parsed.options.find(({ name }) =>
    name.startsWith("--") && !known(name.slice(2)) &&
    !(name.startsWith("--no-") && spec.flags.includes(name.slice(5)))
  );
  if (unknown !== undefined) {
    io.opaque(`wget option not known: ${unknown.name}`);
    return;
  }
  const unfollowed = WGET_UNFOLLOWED.map((name) => `--${name}`);
  if (hasOption(parsed, "-e", "--execute", "-i", "--input-file", "--config", ...unfollowed)) {
    io.opaque("wget option not followed");
    return;
  }
  // active FTP: wget listens for the server's data connection
  if (hasOption(parsed, "--no-passive-ftp")) {
    io.opaque("wget listens for active FTP");
    return;
  }
  if (hasOption(parsed, "-H", "--span-hosts")) {
    io.opaque("wget spans hosts");
    return;
  }
  for (const url of parsed.operands) connectUrl(io, url, "http", { guess: "wget" });
  // credentials for a host that asks come from ~/.netrc unless told not to
  if (!hasOption(parsed, "--no-netrc")) io.homePath("fs_read", ".netrc");
  const document = optionValues(parsed, "-O", "--output-document");
  const prefix = optionValues(parsed, "-P", "--directory-prefix");
  if (document.length > 0) eachOutput(io, document);
  else if (prefix.length > 0) eachPath(io, "fs_write", prefix);
  else io.cwd("fs_write");
  // A tree of host and path directories is written through whatever links it already holds.
  const tree = ["-x", "--force-directories", "-r", "--recursive", "-m", "--mirror", "-p"];
  if (document.length === 0 && hasOption(parsed, ...tree, "--page-requisites")) {
    io.link(prefix.at(-1) ?? STATIC("."), [STATIC(".")], { links: false, use: "output" });
  } else if (
    document.length === 0 && hasOption(parsed, "-N", "--timestamping", "-c", "--continue")
  ) {
    // the file named after the URL is rewritten or appended to in place, through a link there
    // (the server may name it instead)
    const named = hasOption(parsed, "--content-disposition", "--trust-server-names");
    const names = named ? [null] : parsed.operands.map(remoteName);
    const entries = names.includes(null) ? [STATIC(".")] : names.map((name) => STATIC(name!));
    io.link(prefix.at(-1) ?? STATIC("."), entries, { links: false, use: "output" });
  }
  eachOutput(
    io,
    optionValues(parsed, "-o", "--output-file", "-a", "--append-output", "--save-cookies"),
  );
  eachPath(
    io,
    "fs_read",
    optionValues(
      parsed,
      "--post-file",
      "--body-file",
      "--load-cookies",
      "--certificate",
      "--private-key",
      "--ca-certificate",
      "--pinnedpubkey",
    ),
  );
}

/** The file name wget saves URL as (its last path segment, or index.html); null when unsure. */
function remoteName(url: ArgValue): string | null {
  if (url.text === null || !/^(https?|ftp):\/\/[^/?#]*(\/[^?#]*)?$/i.test(url.text)) return null;
  const name = url.text.replace(/^[^:]*:\/\/[^/]*/, "").replace(/^.*\//, "");
  if (name === "") return "index.html";
  return /^[A-Za-z0-9._+-]+$/.test(name) && name !== "." && name !== ".." ? name : null;
}
