-- wrk script of the HTTP benchmark's stateless era (revision 2026-07-28), the xN loads of the
-- stateless libraries: every request is one call of the workload, a POST standing alone. No
-- initialize, no session, no Mcp-Session-Id: the request's params carry the client's _meta
-- (protocol version, capabilities, clientInfo) and its head the era's routing headers
-- (MCP-Protocol-Version, Mcp-Method and, for a tool call or a read, Mcp-Name).
--
--   wrk -t1 -cN -d S -s stateless.lua http://127.0.0.1:PORT/mcp -- CONTENT_TYPES METHOD \
--       PARAMS_JSON CHECK_KIND CHECK_ARG1 CHECK_ARG2 "Header: value"...
--
-- PARAMS_JSON already holds the _meta and the headers are given whole (the runner builds both
-- with benchmarks/http/client.py's stateless_params and stateless_headers, the very ones its own
-- check of an answer sends), so this script sends what Python checked, byte for byte.
--
-- CONTENT_TYPES is the transport's content type, or several separated by commas: the stateless
-- era lets a server answer a request as JSON or as SSE, its choice per request, and in SSE mode
-- the official SDK answers as JSON a request whose handler finishes quickly. So the http-sse
-- cells accept both, and done() reports how many answers were JSON ("json_answers").
--
-- Every request gets its own JSON-RPC id: a counter per wrk thread (all the connections of a
-- thread share its Lua state), offset by the thread's number. Every response is checked (see
-- check.lua). done() prints one JSON line that the runner reads; latency is wrk's own, per
-- request, from writing it to reading its answer.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local check = dofile(here .. "check.lua")

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_index", #threads)
end

function init(args)
  local method, params = args[2], args[3]
  check_answer = check.answer_checker(args[1], args[4], args[5], args[6])
  next_id = thread_index * 1000000000
  ok = 0
  bad = 0
  json_answers = 0
  sample = ""
  headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
  }
  for i = 7, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    if name == nil then
      error("not a header: " .. args[i])
    end
    headers[name] = value
  end
  body_of = function(id)
    return check.request_body(id, method, params)
  end
end

function request()
  next_id = next_id + 1
  return wrk.format("POST", nil, headers, body_of(next_id))
end

function response(status, response_headers, body)
  local problem, content_type = check_answer(status, response_headers, body)
  if problem == nil then
    ok = ok + 1
    if content_type == "application/json" then
      json_answers = json_answers + 1
    end
  else
    bad = bad + 1
    if sample == "" then
      sample = check.sample(problem, status, body)
    end
  end
end

function done(summary, latency, requests)
  check.write_summary(threads, summary, latency, { "json_answers" })
end
