// A call's `Buffer`, `TextEncoder` and `TextDecoder`, made in its own context (see realm.js). The
// bytes live in this context's own typed arrays; the runner's Node does the encoding work on them
// (a view of the same memory, never handed back), so encodings, bounds and errors are Node's.
// `Buffer` is a subclass of this context's `Uint8Array` whose methods are Node's `Buffer.prototype`
// methods by name.
(function install(host, api) {
  "use strict";
  const { SELF } = host;
  const { check, makeError, lazy } = api;

  const typeError = (message) => makeError("TypeError", message, "ERR_INVALID_ARG_TYPE");
  const isBytes = (v) => ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer;
  const MAX_LENGTH = 2 ** 32;
  const size = (n, what) => {
    if (typeof n !== "number") throw typeError(`The "${what}" argument must be of type number. Received ${typeof n}`);
    if (!(n >= 0 && n <= MAX_LENGTH)) {
      throw makeError("RangeError", `The value of "${what}" is out of range. It must be >= 0 && <= ${MAX_LENGTH}. Received ${n}`, "ERR_OUT_OF_RANGE");
    }
    return n;
  };

  /** Node's method `name` on the bytes of `self`. */
  const node = (name, self, a) => {
    const result = host.bufCall(name, self, a[0], a[1], a[2], a[3], a[4]);
    return result === SELF ? self : check(result);
  };

  lazy("Buffer", () => {
    class Buffer extends Uint8Array {
      constructor(a, b, c) {
        // `new Buffer(...)`, deprecated in Node, still means what it did there.
        if (typeof a === "string") return Buffer.from(a, b);
        super(a, b, c);
      }
      static from(value, encodingOrOffset, length) {
        if (typeof value === "string") return fromString(value, encodingOrOffset);
        if (typeof value === "object" && value !== null) {
          if (value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) {
            return new Buffer(value, encodingOrOffset === undefined ? 0 : +encodingOrOffset, length);
          }
          if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return copyOf(value);
          const primitive = typeof value.valueOf === "function" ? value.valueOf() : value;
          if (primitive !== null && primitive !== undefined && primitive !== value) return Buffer.from(primitive, encodingOrOffset, length);
          if (typeof value[Symbol.toPrimitive] === "function") return Buffer.from(value[Symbol.toPrimitive]("string"), encodingOrOffset, length);
          if (value.type === "Buffer" && Array.isArray(value.data)) return copyOf(value.data);
          if (typeof value.length === "number") return copyOf(value);
        }
        throw typeError(
          "The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.",
        );
      }
      static alloc(n, fill, encoding) {
        const buf = new Buffer(size(n, "size"));
        if (fill !== undefined && fill !== 0 && n > 0) buf.fill(fill, encoding);
        return buf;
      }
      static allocUnsafe(n) {
        return new Buffer(size(n, "size"));
      }
      static allocUnsafeSlow(n) {
        return new Buffer(size(n, "size"));
      }
      static byteLength(value, encoding) {
        if (typeof value === "string") return check(host.byteLength(value, encoding === undefined ? "utf8" : `${encoding}`));
        if (isBytes(value)) return value.byteLength;
        throw typeError('The "string" argument must be of type string or an instance of Buffer or ArrayBuffer.');
      }
      static compare(a, b) {
        if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array)) {
          throw typeError('The "buf1" and "buf2" arguments must be instances of Buffer or Uint8Array.');
        }
        return check(host.bufCall("compare", a, b));
      }
      static concat(list, total) {
        if (!Array.isArray(list)) throw typeError('The "list" argument must be an instance of Array.');
        let length = total;
        if (length === undefined) {
          length = 0;
          for (const b of list) length += b?.length ?? 0;
        }
        const out = new Buffer(size(length, "length"));
        let at = 0;
        for (let i = 0; i < list.length; i++) {
          const b = list[i];
          if (!(b instanceof Uint8Array)) throw typeError(`The "list[${i}]" argument must be an instance of Buffer or Uint8Array.`);
          const n = Math.min(b.length, out.length - at);
          if (n <= 0) break;
          out.set(n === b.length ? b : b.subarray(0, n), at);
          at += n;
        }
        return out;
      }
      static isBuffer(value) {
        return value instanceof Buffer;
      }
      static isEncoding(encoding) {
        return typeof encoding === "string" && host.isEncoding(encoding);
      }
      slice(start, end) {
        return this.subarray(start, end);
      }
      toJSON() {
        return { type: "Buffer", data: Array.from(this) };
      }
      // Node's other Buffer.prototype methods, each `name(...a) { return node("name", this, a); }`:
      // written in by the runner from Node's own list (a class body is made far quicker than as
      // many properties defined one by one).
      /* NODE_METHODS */
    }
    Buffer.poolSize = 8192;
    const fromString = (s, encoding) => {
      const e = encoding === undefined || encoding === null ? "utf8" : `${encoding}`;
      const n = check(host.byteLength(s, e));
      const buf = new Buffer(n);
      const written = n === 0 ? 0 : check(host.bufWrite(buf, s, 0, n, e));
      return written === n ? buf : buf.subarray(0, written);
    };
    const copyOf = (items) => {
      const buf = new Buffer(items.length >>> 0);
      buf.set(items);
      return buf;
    };
    return Buffer;
  });

  lazy(
    "TextEncoder",
    () =>
      class TextEncoder {
        get encoding() {
          return "utf-8";
        }
        encode(input = "") {
          const s = `${input}`;
          const n = check(host.byteLength(s, "utf8"));
          const out = new Uint8Array(n);
          if (n > 0) check(host.bufWrite(out, s, 0, n, "utf8"));
          return out;
        }
        encodeInto(source, destination) {
          if (!(destination instanceof Uint8Array)) throw typeError('The "dest" argument must be an instance of Uint8Array.');
          const [read, written] = `${check(host.encodeInto(`${source}`, destination))}`.split(",");
          return { read: +read, written: +written };
        }
      },
  );

  lazy(
    "TextDecoder",
    () =>
      class TextDecoder {
        #id;
        #encoding;
        #fatal;
        #ignoreBOM;
        constructor(label = "utf-8", options = {}) {
          this.#fatal = !!options?.fatal;
          this.#ignoreBOM = !!options?.ignoreBOM;
          this.#id = check(host.decoder(`${label}`, this.#fatal, this.#ignoreBOM));
          this.#encoding = `${host.decoderEncoding(this.#id)}`;
        }
        get encoding() {
          return this.#encoding;
        }
        get fatal() {
          return this.#fatal;
        }
        get ignoreBOM() {
          return this.#ignoreBOM;
        }
        decode(input = undefined, options = {}) {
          if (input !== undefined && !isBytes(input)) {
            throw typeError('The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.');
          }
          return check(host.decode(this.#id, input, !!options?.stream));
        }
      },
  );
})
