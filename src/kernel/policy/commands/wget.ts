/** wget: the hosts it connects to and the files it writes. */
import { type ArgValue, type CommandIO, eachOutput, eachPath } from "./command_io.ts";
import { hasOption, optionValues, parse } from "./_getopt.ts";
import { connectUrl } from "./url.ts";

/** wget: URLs it fetches and the files it writes. */
export function wget(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
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
    ],
    flags: ["span-hosts"],
  }, io);
  if (parsed === null) return;
  if (hasOption(parsed, "-e", "--execute", "-i", "--input-file", "--config")) {
    io.opaque("wget option not followed");
    return;
  }
  if (hasOption(parsed, "-H", "--span-hosts")) {
    io.opaque("wget spans hosts");
    return;
  }
  for (const url of parsed.operands) connectUrl(io, url);
  const document = optionValues(parsed, "-O", "--output-document");
  const prefix = optionValues(parsed, "-P", "--directory-prefix");
  if (document.length > 0) eachOutput(io, document);
  else if (prefix.length > 0) eachPath(io, "fs_write", prefix);
  else io.cwd("fs_write");
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
    ),
  );
}
