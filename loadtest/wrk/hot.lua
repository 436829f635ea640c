-- The requests of loadtest/hotpath for wrk: one script, the load chosen by HOT_SCENARIO.
--   tenant_one     GET /api/v1/t/{slug}/sites/{id}, the first garden of HOT_GARDENS (JWT)
--   tenant_spread  the same, each request on a garden of HOT_GARDENS at random
--   me             GET /api/v1/users/me (JWT)
--   phase_seq      GET /api/v1/species/{key}/phase-sequence, a species of HOT_SPECIES at random
--   mcp_read       POST /api/v1/mcp tools/call get_species_phase_sequence (API key HOT_KEY),
--                  one MCP session per wrk thread from HOT_SESSIONS (one id per line)
--   page           GET HOT_PATH as a browser asks for a page (loadtest/pages): a web session
--                  cookie of HOT_COOKIES (one `kv_session` value per line) per connection in
--                  turn, Chrome's Accept-Encoding; with HOT_TOKEN set and no HOT_COOKIES, the
--                  same path with the bearer token instead (the REST garden read beside it)
-- Every answer is counted by status; an answer that is not 2xx, and a tool result that is not
-- `"isError":false`, is a failure. `done` writes the one-object JSON summary to HOT_SUMMARY
-- (per_second, p99_ms, failures, status_codes), the shape the report reads.

local scenario = os.getenv("HOT_SCENARIO") or ""
local token = os.getenv("HOT_TOKEN") or ""
local key = os.getenv("HOT_KEY") or ""

local function lines(path)
  local out = {}
  if path == nil or path == "" then return out end
  for line in io.lines(path) do
    if line ~= "" then out[#out + 1] = line end
  end
  return out
end

local function fields(line)
  local a, b = line:match("^([^\t]*)\t?(.*)$")
  return a, b
end

-- setup runs once per thread in the main state: hand each thread its number and session.
local threads = {}
local sessions = lines(os.getenv("HOT_SESSIONS"))
function setup(thread)
  local n = #threads + 1
  thread:set("thread_no", n)
  if #sessions > 0 then
    thread:set("session", sessions[((n - 1) % #sessions) + 1])
  end
  threads[n] = thread
end

local paths = {}
local bearer = { ["authorization"] = "Bearer " .. token }
local page_headers = {}
local cookie_turn = 0
local mcp_headers
local species = {}
local calls = 0
codes = {}
bad_tools = 0

function init(args)
  math.randomseed(os.time() * 1000 + (thread_no or 0))
  if scenario == "tenant_one" or scenario == "tenant_spread" then
    for _, line in ipairs(lines(os.getenv("HOT_GARDENS"))) do
      local slug, site = fields(line)
      paths[#paths + 1] = "/api/v1/t/" .. slug .. "/sites/" .. site
      if scenario == "tenant_one" then break end
    end
  elseif scenario == "page" then
    paths[1] = os.getenv("HOT_PATH") or ""
    for _, c in ipairs(lines(os.getenv("HOT_COOKIES"))) do
      page_headers[#page_headers + 1] = {
        ["cookie"] = "kv_session=" .. c,
        ["accept"] = "text/html",
        ["accept-encoding"] = "gzip, deflate, br, zstd",
      }
    end
    if #page_headers == 0 then page_headers[1] = bearer end
  elseif scenario == "me" then
    paths[1] = "/api/v1/users/me"
  elseif scenario == "phase_seq" or scenario == "mcp_read" then
    for _, line in ipairs(lines(os.getenv("HOT_SPECIES"))) do
      local sp = fields(line)
      species[#species + 1] = sp
      paths[#paths + 1] = "/api/v1/species/" .. sp .. "/phase-sequence"
    end
  end
  if #paths == 0 then
    error("HOT_SCENARIO " .. scenario .. ": nothing to request (check HOT_GARDENS/HOT_SPECIES)")
  end
  if scenario == "mcp_read" then
    if session == nil then error("mcp_read needs HOT_SESSIONS") end
    mcp_headers = {
      ["x-api-key"] = key,
      ["mcp-session-id"] = session,
      ["mcp-protocol-version"] = "2025-06-18",
      ["content-type"] = "application/json",
    }
  end
end

function request()
  if scenario == "mcp_read" then
    calls = calls + 1
    local sp = species[math.random(#species)]
    local body = '{"jsonrpc":"2.0","id":' .. calls .. ',"method":"tools/call","params":'
      .. '{"name":"get_species_phase_sequence","arguments":{"species_key":"' .. sp .. '"}}}'
    return wrk.format("POST", "/api/v1/mcp", mcp_headers, body)
  end
  if scenario == "page" then
    -- The sessions in turn (wrk keeps connections alive: each carries a run of one session's
    -- pages, as a browser would).
    cookie_turn = cookie_turn % #page_headers + 1
    return wrk.format("GET", paths[1], page_headers[cookie_turn])
  end
  return wrk.format("GET", paths[math.random(#paths)], bearer)
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
  if scenario == "mcp_read" and status == 200 and not body:find('"isError":false', 1, true) then
    bad_tools = bad_tools + 1
  end
end

function done(summary, latency, requests)
  local total, failures, parts = 0, 0, {}
  local merged = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("codes")) do
      merged[status] = (merged[status] or 0) + n
    end
    failures = failures + thread:get("bad_tools")
  end
  for status, n in pairs(merged) do
    total = total + n
    if status < 200 or status > 299 then failures = failures + n end
    parts[#parts + 1] = string.format('"%d": %d', status, n)
  end
  local e = summary.errors
  failures = failures + e.connect + e.read + e.write + e.timeout
  local out = assert(io.open(os.getenv("HOT_SUMMARY"), "w"))
  out:write(string.format(
    '{"requests": %d, "per_second": %.1f, "p99_ms": %.3f, "p50_ms": %.3f, "failures": %d, '
      .. '"socket_errors": %d, "status_codes": {%s}}\n',
    total, total / (summary.duration / 1e6), latency:percentile(99) / 1000,
    latency:percentile(50) / 1000, failures, e.connect + e.read + e.write + e.timeout,
    table.concat(parts, ", ")))
  out:close()
end
