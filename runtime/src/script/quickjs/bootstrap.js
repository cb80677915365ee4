// Host glue, not SDK: builds the one `ctx` from the raw bindings with the SDK's own `makeContext`
// (sdk-ts/src/index.ts), then hides the bindings so scripts reach the host only through `ctx`.
import { makeContext } from "@trailblaze/scripting";

const ctx = makeContext(globalThis.__trailblazeBindings);
delete globalThis.__trailblazeBindings;

// Captured now: a script that replaces `Promise.resolve` later must not rewrite other tools' results.
const resolve = Promise.resolve.bind(Promise);
const reject = Promise.reject.bind(Promise);

// Runs a tool's handler for the host. Scripts can see it but not replace it; calling it gains a
// script nothing, since the host keeps the call depth itself.
Object.defineProperty(globalThis, "__trailblazeRun", {
  value: (t, input) => {
    try {
      return resolve(t.handler(input, ctx));
    } catch (e) {
      return reject(e);
    }
  },
  writable: false,
  configurable: false,
  enumerable: false,
});
