import { trailblaze } from "@trailblaze/scripting";
import { allNodes, byId, hasId, type Snapshot } from "./screen";

interface SetDarkModeInput {
  /** Whether dark mode should end up on. */
  enabled: boolean;
}

/** Opens Settings from the inbox, sets the dark-mode toggle, then goes back to the inbox. */
export const setDarkMode = trailblaze.tool<SetDarkModeInput, { changed: boolean }>(async (input, ctx) => {
  await ctx.tools.tapOnElementBySelector({ nodeSelector: byId("settings") });
  const settings = (await ctx.tools.snapshot({})) as Snapshot;
  const toggle = allNodes(settings.root).find((n) => hasId(n, "darkMode"));
  if (!toggle) throw new Error("no dark mode toggle on the settings screen");
  const changed = toggle.checked !== input.enabled;
  if (changed) await ctx.tools.tapOnElementBySelector({ nodeSelector: byId("darkMode") });
  // The screen's own back button: iOS has no BACK key.
  await ctx.tools.tapOnElementBySelector({ nodeSelector: byId("navigateUp") });
  return { changed };
});
