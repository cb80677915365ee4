import { trailblaze } from "@trailblaze/scripting";

interface AddItemInput {
  /** The item's name. */
  name: string;
}

/** Types the item's name into the form and adds it to the list. */
export const addItem = trailblaze.tool<AddItemInput, {}>(async (input, ctx) => {
  await ctx.tools.web_type({ ref: "css=#name", text: input.name });
  await ctx.tools.web_click({ nodeSelector: { web: { dataTestId: "add" } } });
  return {};
});
