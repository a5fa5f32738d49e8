// Test fixture: the `shoal-kernel token …` command as a process of its own.
import { runTokenCommand } from "../../../src/kernel/cli/token.ts";

Deno.exit(await runTokenCommand(Deno.args, Deno.env.toObject()));
