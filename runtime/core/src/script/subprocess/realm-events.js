// A call's `DOMException`, `Event`, `EventTarget`, `AbortController` and `AbortSignal`, made in its
// own context (see realm.js): plain JavaScript, nothing of the runner's but its timers (for
// `AbortSignal.timeout`) and its next-tick queue (a listener's throw is reported as Node reports it:
// as an uncaught exception, which fails the call).
(function install(host, api) {
  "use strict";
  const CODES = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
    QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };

  // Made when one of them is first used.
  const build = () => {
    class DOMException extends Error {
      #name;
      constructor(message = "", options = "Error") {
        super(`${message}`);
        this.#name = typeof options === "object" && options !== null ? `${options.name ?? "Error"}` : `${options}`;
        if (typeof options === "object" && options !== null && "cause" in options) {
          Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true, enumerable: false });
        }
      }
      get name() {
        return this.#name;
      }
      get code() {
        return CODES[this.#name] ?? 0;
      }
    }

    // Friends of the classes below: what dispatching sets on an event.
    let setTarget;
    let isStopped;

    class Event {
      #type;
      #bubbles;
      #cancelable;
      #composed;
      #defaultPrevented = false;
      #stopped = false;
      #target = null;
      #current = null;
      #timeStamp = host.now();
      static {
        setTarget = (e, target, current) => {
          e.#target = target;
          e.#current = current;
        };
        isStopped = (e) => e.#stopped;
      }
      constructor(type, init = {}) {
        if (arguments.length === 0) throw api.makeError("TypeError", 'The "type" argument must be specified', "ERR_MISSING_ARGS");
        this.#type = `${type}`;
        this.#bubbles = !!init?.bubbles;
        this.#cancelable = !!init?.cancelable;
        this.#composed = !!init?.composed;
      }
      get type() {
        return this.#type;
      }
      get bubbles() {
        return this.#bubbles;
      }
      get cancelable() {
        return this.#cancelable;
      }
      get composed() {
        return this.#composed;
      }
      get defaultPrevented() {
        return this.#cancelable && this.#defaultPrevented;
      }
      get target() {
        return this.#target;
      }
      get currentTarget() {
        return this.#current;
      }
      get srcElement() {
        return this.#target;
      }
      get timeStamp() {
        return this.#timeStamp;
      }
      get isTrusted() {
        return false;
      }
      get eventPhase() {
        return this.#current === null ? 0 : 2;
      }
      composedPath() {
        return this.#current === null ? [] : [this.#current];
      }
      preventDefault() {
        this.#defaultPrevented = true;
      }
      stopPropagation() {}
      stopImmediatePropagation() {
        this.#stopped = true;
      }
    }

    class EventTarget {
      #listeners = new Map();
      addEventListener(type, listener, options) {
        if (listener === null || listener === undefined) return;
        const once = typeof options === "object" && options !== null && !!options.once;
        const signal = typeof options === "object" && options !== null ? options.signal : undefined;
        if (signal?.aborted) return;
        const list = this.#listeners.get(`${type}`) ?? [];
        if (list.some((l) => l.listener === listener)) return;
        const entry = { listener, once };
        list.push(entry);
        this.#listeners.set(`${type}`, list);
        signal?.addEventListener("abort", () => this.removeEventListener(type, listener));
      }
      removeEventListener(type, listener) {
        const list = this.#listeners.get(`${type}`);
        if (list === undefined) return;
        const i = list.findIndex((l) => l.listener === listener);
        if (i >= 0) list.splice(i, 1);
      }
      dispatchEvent(event) {
        if (!(event instanceof Event)) throw api.makeError("TypeError", 'The "event" argument must be an instance of Event.', "ERR_INVALID_ARG_TYPE");
        setTarget(event, this, this);
        const handler = this[`on${event.type}`];
        const list = [...(this.#listeners.get(event.type) ?? [])];
        if (typeof handler === "function") list.unshift({ listener: handler, once: false });
        for (const entry of list) {
          if (isStopped(event)) break;
          if (entry.once) this.removeEventListener(event.type, entry.listener);
          try {
            const { listener } = entry;
            if (typeof listener === "function") listener.call(this, event);
            else if (typeof listener?.handleEvent === "function") listener.handleEvent(event);
          } catch (e) {
            host.nextTick(() => {
              throw e;
            });
          }
        }
        setTarget(event, this, null);
        return !event.defaultPrevented;
      }
    }

    const token = Symbol("AbortSignal");
    let abortSignal;
    class AbortSignal extends EventTarget {
      #aborted = false;
      #reason = undefined;
      onabort = null;
      static {
        abortSignal = (signal, reason) => {
          if (signal.#aborted) return;
          signal.#aborted = true;
          signal.#reason = reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
          signal.dispatchEvent(new Event("abort"));
        };
      }
      constructor(key) {
        if (key !== token) throw api.makeError("TypeError", "Illegal constructor", "ERR_ILLEGAL_CONSTRUCTOR");
        super();
      }
      get aborted() {
        return this.#aborted;
      }
      get reason() {
        return this.#reason;
      }
      throwIfAborted() {
        if (this.#aborted) throw this.#reason;
      }
      static abort(reason) {
        const signal = new AbortSignal(token);
        abortSignal(signal, reason);
        return signal;
      }
      static timeout(ms) {
        const signal = new AbortSignal(token);
        const t = globalThis.setTimeout(() => abortSignal(signal, new DOMException("The operation was aborted due to timeout", "TimeoutError")), ms);
        t.unref();
        return signal;
      }
      static any(signals) {
        const signal = new AbortSignal(token);
        for (const s of signals) {
          if (s.aborted) {
            abortSignal(signal, s.reason);
            return signal;
          }
        }
        for (const s of signals) s.addEventListener("abort", () => abortSignal(signal, s.reason), { once: true });
        return signal;
      }
    }

    class AbortController {
      #signal = new AbortSignal(token);
      get signal() {
        return this.#signal;
      }
      abort(reason) {
        abortSignal(this.#signal, reason);
      }
    }
    return { DOMException, Event, EventTarget, AbortSignal, AbortController };
  };
  let made;
  const get = () => (made ??= build());
  for (const name of ["DOMException", "Event", "EventTarget", "AbortSignal", "AbortController"]) api.lazy(name, () => get()[name]);
  Object.defineProperty(api, "DOMException", { get: () => get().DOMException });
})
