import { trailblaze } from "@trailblaze/scripting";

interface AddItemInput {
  /** The item's name. */
  name: string;
}

/** Opens the editor from the list and types the item's name. */
export const addItem = trailblaze.tool<AddItemInput, { typed: number }>(async (input, ctx) => {
  await ctx.tools.tapOnElementBySelector({
    nodeSelector: { androidAccessibility: { resourceIdRegex: ".*:id/add" } },
  });
  const typed = await ctx.tools.inputText({
    text: input.name,
    nodeSelector: { androidAccessibility: { resourceIdRegex: ".*:id/name" } },
  });
  return { typed: typed.typed };
});
