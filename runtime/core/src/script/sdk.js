function tool(specOrHandler, handler) {
    if (typeof specOrHandler === "function") {
        return {
            __trailblazeTool: true,
            spec: {},
            handler: specOrHandler
        };
    }
    if (typeof handler !== "function") {
        throw new TypeError("trailblaze.tool(spec, handler): handler must be a function");
    }
    return {
        __trailblazeTool: true,
        spec: specOrHandler ?? {},
        handler
    };
}
export const trailblaze = {
    tool
};
export default trailblaze;
export class TrailblazeHostError extends Error {
    hostFunction;
    constructor(message, hostFunction){
        super(message);
        this.name = "TrailblazeHostError";
        this.hostFunction = hostFunction;
    }
}
export class TrailblazeToolError extends Error {
    tool;
    constructor(message, tool){
        super(message);
        this.name = "TrailblazeToolError";
        this.tool = tool;
    }
}
export function unwrapEnvelope(reply, name) {
    const envelope = typeof reply === "string" ? JSON.parse(reply) : reply;
    if (typeof envelope === "object" && envelope !== null && envelope.ok === true) {
        return envelope.value;
    }
    const error = typeof envelope === "object" && envelope !== null ? envelope.error : undefined;
    throw new Error(typeof error === "string" ? error : `malformed reply from the host for ${name}`);
}
function messageOf(e) {
    return e instanceof Error ? e.message : String(e);
}
function isProbe(key) {
    return typeof key !== "string" || key === "then" || key === "toJSON" || key in Object.prototype;
}
function namespace(make, names = []) {
    const fallback = new Proxy({}, {
        get (target, key) {
            return isProbe(key) ? Reflect.get(target, key) : make(key);
        }
    });
    const ns = Object.create(fallback);
    for (const name of names){
        if (!isProbe(name)) ns[name] = make(name);
    }
    return Object.freeze(ns);
}
function fetchRequest(input, init) {
    const url = typeof input === "string" ? input : input !== null && typeof input === "object" && typeof input.url === "string" ? input.url : String(input);
    const request = {
        url
    };
    if (init === undefined || init === null) return request;
    if (init.method !== undefined) request.method = String(init.method);
    const given = init.headers;
    if (given !== undefined && given !== null) {
        const headers = [];
        if (Array.isArray(given)) {
            for (const pair of given)headers.push([
                String(pair[0]),
                String(pair[1])
            ]);
        } else if (typeof given.forEach === "function") {
            given.forEach((v, n)=>headers.push([
                    String(n),
                    String(v)
                ]));
        } else {
            for (const [n, v] of Object.entries(given))headers.push([
                n,
                String(v)
            ]);
        }
        request.headers = headers;
    }
    if (init.body !== undefined && init.body !== null) {
        if (typeof init.body !== "string") {
            throw new TypeError("ctx.fetch: `body` must be a string (JSON.stringify an object first)");
        }
        request.body = init.body;
    }
    return request;
}
function fetchResponse(reply) {
    const pairs = reply.headers.map(([n, v])=>[
            n.toLowerCase(),
            v
        ]);
    const joined = (name)=>{
        const key = name.toLowerCase();
        const values = pairs.filter(([n])=>n === key).map(([, v])=>v);
        return values.length === 0 ? null : values.join(", ");
    };
    const headers = Object.freeze({
        get: joined,
        has: (name)=>joined(name) !== null,
        forEach: (callback)=>pairs.forEach(([n, v])=>callback(v, n)),
        entries: ()=>pairs.map(([n, v])=>[
                    n,
                    v
                ])[Symbol.iterator](),
        [Symbol.iterator]: ()=>pairs.map(([n, v])=>[
                    n,
                    v
                ])[Symbol.iterator]()
    });
    const body = reply.body;
    return Object.freeze({
        status: reply.status,
        ok: reply.status >= 200 && reply.status < 300,
        statusText: reply.statusText,
        url: reply.url,
        headers,
        text: async ()=>body,
        json: async ()=>JSON.parse(body)
    });
}
export function makeContext(bindings) {
    const { callTool, callHost } = bindings;
    const tools = namespace((name)=>async (args)=>{
            try {
                return await callTool(name, args === undefined ? {} : args);
            } catch (e) {
                throw new TrailblazeToolError(messageOf(e), name);
            }
        }, bindings.toolNames);
    const direct = bindings.hostFunctions ?? {};
    const bare = typeof bindings.adoptHostError === "function";
    if (bare) bindings.adoptHostError(TrailblazeHostError);
    const host = namespace((name)=>{
        const fn = Object.prototype.hasOwnProperty.call(direct, name) ? direct[name] : undefined;
        if (fn !== undefined && bare) return fn;
        if (fn !== undefined) {
            return (args)=>{
                try {
                    return fn(args === undefined ? {} : args);
                } catch (e) {
                    throw new TrailblazeHostError(messageOf(e), name);
                }
            };
        }
        return (args)=>{
            try {
                return callHost(name, args === undefined ? {} : args);
            } catch (e) {
                throw new TrailblazeHostError(messageOf(e), name);
            }
        };
    }, bindings.hostNames ?? Object.keys(direct));
    const rawFetch = bindings.fetch;
    const fetch = async (input, init)=>{
        const request = fetchRequest(input, init);
        if (rawFetch === undefined) throw new TrailblazeHostError("fetch: this runtime gives scripts no network", "fetch");
        let reply;
        try {
            reply = await rawFetch(request);
        } catch (e) {
            throw new TrailblazeHostError(messageOf(e), "fetch");
        }
        return fetchResponse(reply);
    };
    return Object.freeze({
        tools: tools,
        host: host,
        fetch
    });
}
export const selectors = Object.freeze({
    androidAccessibility: (match)=>({
            androidAccessibility: match
        }),
    androidMaestro: (match)=>({
            androidMaestro: match
        }),
    web: (match)=>({
            web: match
        }),
    compose: (match)=>({
            compose: match
        }),
    iosMaestro: (match)=>({
            iosMaestro: match
        }),
    iosAxe: (match)=>({
            iosAxe: match
        })
});
