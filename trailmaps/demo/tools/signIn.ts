import { trailblaze } from "@trailblaze/scripting";
import { center, find, hasId, type ViewTree } from "./screen";

interface SignInInput {
  /** The account whose credentials the secrets store holds (e.g. `demo`). */
  account: string;
}

interface SignInResult {
  /** The screen shown after signing in. */
  screen: string;
}

/**
 * Launches the demo app and signs in with an account's stored credentials.
 * The password never appears in a step: it is typed through a `{{secret:...}}` placeholder.
 */
export const signIn = trailblaze.tool<SignInInput, SignInResult>(async (input, ctx) => {
  await ctx.tools.launchApp({ appId: "com.example.demo" });
  // The username comes back from the host; the password is named, never read.
  const { username } = ctx.host.lookupCredential({ account: input.account });
  const secretName = `${input.account.toUpperCase()}_PASSWORD`;

  let tree = (await ctx.tools.snapshot({})) as ViewTree;
  await ctx.tools.tapOnPoint(center(find(tree, "email field", (n) => hasId(n, "email"))));
  await ctx.tools.inputText({ text: username });
  await ctx.tools.tapOnPoint(center(find(tree, "password field", (n) => hasId(n, "password"))));
  await ctx.tools.inputText({ text: `{{secret:${secretName}}}` });
  await ctx.tools.tapOnPoint(center(find(tree, "sign-in button", (n) => hasId(n, "submit"))));

  tree = (await ctx.tools.snapshot({})) as ViewTree;
  const inbox = tree.root.children?.some((n) => n.text === "Inbox");
  if (!inbox) throw new Error("signing in did not reach the inbox");
  return { screen: "inbox" };
});
