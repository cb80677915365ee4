import { trailblaze } from "@trailblaze/scripting";
import { allNodes, type Snapshot } from "./screen";

interface InboxSubjectsResult {
  /** Subjects of the messages on screen, top to bottom. */
  subjects: string[];
}

/** Reads the subjects of the messages in the inbox. Changes nothing on the device. */
export const inboxSubjects = trailblaze.tool<Record<string, never>, InboxSubjectsResult>(
  { readOnly: true },
  async (_input, ctx) => {
    const snap = (await ctx.tools.snapshot({})) as Snapshot;
    const subjects = allNodes(snap.root)
      .filter((n) => /message\d+Subject$/.test(n.resourceId ?? "") && n.text)
      .map((n) => n.text as string);
    return { subjects };
  },
);
