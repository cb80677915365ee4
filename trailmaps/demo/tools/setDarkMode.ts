import { trailblaze } from "@trailblaze/scripting";
import { center, find, type ViewTree } from "./screen";

interface SetDarkModeInput {
  /** Whether dark mode should end up on. */
  enabled: boolean;
}

/** Opens Settings from the inbox and sets the dark-mode toggle, then goes back. */
export const setDarkMode = trailblaze.tool<SetDarkModeInput, { changed: boolean }>(async (input, ctx) => {
  let tree = (await ctx.tools.snapshot({})) as ViewTree;
  await ctx.tools.tapOnPoint(center(find(tree, "Settings button", (n) => n.text === "Settings")));
  tree = (await ctx.tools.snapshot({})) as ViewTree;
  const toggle = find(tree, "dark mode toggle", (n) => n.checked === true || n.checked === false);
  const changed = toggle.checked !== input.enabled;
  if (changed) await ctx.tools.tapOnPoint(center(toggle));
  await ctx.tools.pressKey({ keyCode: "BACK" });
  return { changed };
});
