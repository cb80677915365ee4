import { trailblaze } from "@trailblaze/scripting";
import { allNodes, byId, type Snapshot } from "./screen";

interface SetDarkModeInput {
  /** Whether dark mode should end up on. */
  enabled: boolean;
}

/** Opens Settings from the inbox, sets the dark-mode toggle, then goes back. */
export const setDarkMode = trailblaze.tool<SetDarkModeInput, { changed: boolean }>(async (input, ctx) => {
  await ctx.tools.tapOnElementBySelector({ nodeSelector: byId("settings") });
  const settings = (await ctx.tools.snapshot({})) as Snapshot;
  const toggle = allNodes(settings.root).find((n) => (n.resourceId ?? "").endsWith(":id/darkMode"));
  if (!toggle) throw new Error("no dark mode toggle on the settings screen");
  const changed = toggle.checked !== input.enabled;
  if (changed) await ctx.tools.tapOnElementBySelector({ nodeSelector: byId("darkMode") });
  await ctx.tools.pressKey({ keyCode: "BACK" });
  return { changed };
});
