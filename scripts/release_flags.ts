/** Prints the compiled facade's permission flags (M-PERM-3), one per line, for release.yml. */
import { releaseFlags } from "../src/mcp/permissions.ts";

for (const flag of releaseFlags()) console.log(flag);
