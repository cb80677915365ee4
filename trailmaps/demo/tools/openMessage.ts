import { trailblaze } from "@trailblaze/scripting";
import { center, find, type ViewTree } from "./screen";

interface OpenMessageInput {
  /** Which message to open, counting from 1 at the top of the inbox. */
  index: number;
}

/** Opens a message in the inbox (sign in first) and returns its subject. */
export const openMessage = trailblaze.tool<OpenMessageInput, { subject: string }>(async (input, ctx) => {
  const tree = (await ctx.tools.snapshot({})) as ViewTree;
  const row = find(tree, `message ${input.index}`, (n) => (n.resourceId ?? "").endsWith(`:id/message${input.index}`));
  await ctx.tools.tapOnPoint(center(row));
  const detail = (await ctx.tools.snapshot({})) as ViewTree;
  const subject = find(detail, "subject", (n) => (n.resourceId ?? "").endsWith("Subject"));
  return { subject: subject.text ?? "" };
});
