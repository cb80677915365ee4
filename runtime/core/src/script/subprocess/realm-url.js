// A call's `URL` and `URLSearchParams`, made in its own context (see realm.js). Parsing is Node's
// (the runner parses and hands back the parts as text), the objects are this context's.
(function install(host, api) {
  "use strict";
  const { check, makeError, lazy } = api;
  const { parse, stringify } = JSON;
  const PARTS = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
  const SETTABLE = new Set(["protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"]);

  let URL;
  let URLSearchParams;
  const build = () => {
    // Friends: a URL's search and its params follow each other.
    let paramsChanged;
    let searchChanged;

    const invalid = (input) => {
      const e = makeError("TypeError", "Invalid URL", "ERR_INVALID_URL");
      e.input = input;
      return e;
    };

    URL = class URL {
      #parts;
      #params;
      static {
        paramsChanged = (url, query) => {
          url.#parts = parse(check(host.urlSet(url.#parts[0], "search", query)));
        };
      }
      constructor(input, base) {
        if (arguments.length === 0) throw makeError("TypeError", 'The "url" argument must be specified', "ERR_MISSING_ARGS");
        const text = `${input}`;
        const parts = host.url(text, base === undefined ? "" : `${base}`, base !== undefined);
        if (parts === host.FAIL) throw invalid(text);
        this.#parts = parse(parts);
      }
      static canParse(input, base) {
        return host.url(`${input}`, base === undefined ? "" : `${base}`, base !== undefined) !== host.FAIL;
      }
      get searchParams() {
        if (this.#params === undefined) {
          this.#params = new URLSearchParams(this.#parts[9]);
          searchChanged(this.#params, this);
        }
        return this.#params;
      }
      get href() {
        return this.#parts[0];
      }
      set href(value) {
        const text = `${value}`;
        const parts = host.url(text, "", false);
        if (parts === host.FAIL) throw invalid(text);
        this.#set(parse(parts));
      }
      #set(parts) {
        this.#parts = parts;
        if (this.#params !== undefined) searchChanged(this.#params, this, parts[9]);
      }
      #change(key, value) {
        this.#set(parse(check(host.urlSet(this.#parts[0], key, `${value}`))));
      }
      toString() {
        return this.#parts[0];
      }
      toJSON() {
        return this.#parts[0];
      }
      static {
        PARTS.forEach((name, i) => {
          if (i === 0) return;
          const descriptor = {
            get() {
              return this.#parts[i];
            },
            configurable: true,
            enumerable: true,
          };
          if (SETTABLE.has(name)) {
            descriptor.set = function (value) {
              this.#change(name, value);
            };
          }
          Object.defineProperty(URL.prototype, name, descriptor);
        });
      }
    };

    URLSearchParams = class URLSearchParams {
      #list = [];
      #url = null;
      static {
        searchChanged = (params, url, search) => {
          params.#url = url;
          if (search !== undefined) params.#list = pairs(search);
        };
      }
      constructor(init = undefined) {
        if (init === undefined || init === null) return;
        if (typeof init === "object" || typeof init === "function") {
          const iterator = init[Symbol.iterator];
          if (iterator !== undefined && iterator !== null) {
            if (typeof iterator !== "function") throw makeError("TypeError", "Query pairs must be iterable", "ERR_ARG_NOT_ITERABLE");
            for (const pair of init) {
              const p = [...pair];
              if (p.length !== 2) throw makeError("TypeError", "Each query pair must be an iterable [name, value] tuple", "ERR_INVALID_TUPLE");
              this.#list.push([`${p[0]}`, `${p[1]}`]);
            }
          } else {
            for (const key of Reflect.ownKeys(init)) {
              if (typeof key === "string" && Object.prototype.propertyIsEnumerable.call(init, key)) this.#list.push([key, `${init[key]}`]);
            }
          }
          return;
        }
        this.#list = pairs(`${init}`);
      }
      #changed() {
        if (this.#url !== null) paramsChanged(this.#url, this.toString());
      }
      get size() {
        return this.#list.length;
      }
      append(name, value) {
        this.#list.push([`${name}`, `${value}`]);
        this.#changed();
      }
      delete(name, value) {
        const n = `${name}`;
        const v = value === undefined ? undefined : `${value}`;
        this.#list = this.#list.filter(([k, x]) => k !== n || (v !== undefined && x !== v));
        this.#changed();
      }
      get(name) {
        const n = `${name}`;
        const found = this.#list.find(([k]) => k === n);
        return found === undefined ? null : found[1];
      }
      getAll(name) {
        const n = `${name}`;
        return this.#list.filter(([k]) => k === n).map(([, v]) => v);
      }
      has(name, value) {
        const n = `${name}`;
        const v = value === undefined ? undefined : `${value}`;
        return this.#list.some(([k, x]) => k === n && (v === undefined || x === v));
      }
      set(name, value) {
        const n = `${name}`;
        const i = this.#list.findIndex(([k]) => k === n);
        if (i < 0) this.#list.push([n, `${value}`]);
        else this.#list = [...this.#list.slice(0, i), [n, `${value}`], ...this.#list.slice(i + 1).filter(([k]) => k !== n)];
        this.#changed();
      }
      sort() {
        // By name in UTF-16 code units, stable, as the standard says.
        this.#list = this.#list
          .map((p, i) => [p, i])
          .sort(([a, i], [b, j]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : i - j))
          .map(([p]) => p);
        this.#changed();
      }
      forEach(callback, thisArg) {
        if (typeof callback !== "function") throw makeError("TypeError", 'The "callback" argument must be of type function', "ERR_INVALID_ARG_TYPE");
        for (let i = 0; i < this.#list.length; i++) {
          const [k, v] = this.#list[i];
          callback.call(thisArg, v, k, this);
        }
      }
      *entries() {
        for (let i = 0; i < this.#list.length; i++) yield [...this.#list[i]];
      }
      *keys() {
        for (const [k] of this.entries()) yield k;
      }
      *values() {
        for (const [, v] of this.entries()) yield v;
      }
      [Symbol.iterator]() {
        return this.entries();
      }
      toString() {
        return this.#list.length === 0 ? "" : `${check(host.searchSerialize(stringify(this.#list)))}`;
      }
    };
    const pairs = (query) => parse(check(host.searchParse(query)));
  };

  lazy("URL", () => {
    if (URL === undefined) build();
    return URL;
  });
  lazy("URLSearchParams", () => {
    if (URL === undefined) build();
    return URLSearchParams;
  });
})
