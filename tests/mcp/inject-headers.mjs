// Preloaded into the conformance runner (NODE_OPTIONS="--import <this file>"): the runner has no
// option for request headers, and the tool server takes API keys only. Adds the headers of
// MCP_EXTRA_HEADERS (a JSON object) to every fetch() that does not set them itself.
const extra = JSON.parse(process.env.MCP_EXTRA_HEADERS ?? "{}");
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  for (const [name, value] of Object.entries(extra)) {
    if (!headers.has(name)) headers.set(name, value);
  }
  return realFetch(input, { ...init, headers });
};
