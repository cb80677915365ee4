import { trailblaze } from "@trailblaze/scripting";
import { allNodes, hasId, type ViewTree } from "./screen";

interface InboxSubjectsResult {
  /** Subjects of the messages on screen, top to bottom. */
  subjects: string[];
}

/** Reads the subjects of the messages in the inbox. Changes nothing on the device. */
export const inboxSubjects = trailblaze.tool<Record<string, never>, InboxSubjectsResult>(
  { readOnly: true },
  async (_input, ctx) => {
    const tree = (await ctx.tools.snapshot({})) as ViewTree;
    const subjects = allNodes(tree.root)
      .filter((n) => /message\d+Subject$/.test(n.resourceId ?? "") && n.text)
      .map((n) => n.text as string);
    return { subjects };
  },
);
