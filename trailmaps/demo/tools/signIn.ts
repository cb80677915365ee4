import { trailblaze } from "@trailblaze/scripting";
import { byId } from "./screen";

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
  // The username comes back from the host; the password is only named, never read by the script.
  const { username } = ctx.host.lookupCredential({ account: input.account });
  await ctx.tools.inputText({ text: username, nodeSelector: byId("email") });
  await ctx.tools.inputText({ text: `{{secret:${input.account.toUpperCase()}_PASSWORD}}`, nodeSelector: byId("password") });
  await ctx.tools.tapOnElementBySelector({ nodeSelector: { androidAccessibility: { textRegex: "Sign in" } } });
  await ctx.tools.assertVisibleBySelector({ nodeSelector: { androidAccessibility: { textRegex: "Inbox" } } });
  return { screen: "inbox" };
});
