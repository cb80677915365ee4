import { trailblaze } from "@trailblaze/scripting";
import { allNodes, hasId, type Snapshot } from "./screen";

interface OpenMessageInput {
  /** Which message to open, counting from 1 at the top of the inbox. */
  index: number;
}

/** Opens a message in the inbox (sign in first) and returns its subject. */
export const openMessage = trailblaze.tool<OpenMessageInput, { subject: string }>(async (input, ctx) => {
  const inbox = (await ctx.tools.snapshot({})) as Snapshot;
  const row = allNodes(inbox.root).find((n) => hasId(n, `message${input.index}`));
  if (!row) throw new Error(`the inbox has no message ${input.index}`);
  // Picked by ref, as the LLM would; recorded as a tap on the row's selector.
  await ctx.tools.tap({ ref: row.ref });
  const detail = (await ctx.tools.snapshot({})) as Snapshot;
  // The message screen shows its subject in the node with id `subject`.
  const subject = allNodes(detail.root).find((n) => hasId(n, "subject"));
  if (!subject?.text) throw new Error(`message ${input.index} shows no subject`);
  return { subject: subject.text };
});
