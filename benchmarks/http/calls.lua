-- wrk script of the HTTP benchmark's xN loads: every request is one call of the workload on one
-- Streamable HTTP session opened beforehand (from Python).
--
--   wrk -t1 -cN -d S -s calls.lua http://127.0.0.1:PORT/mcp -- SESSION_ID PROTOCOL_VERSION \
--       CONTENT_TYPE METHOD PARAMS_JSON CHECK_KIND CHECK_ARG1 CHECK_ARG2
--
-- SESSION_ID may be several ids, comma-separated: then wrk thread K calls on the Kth (modulo
-- their number), so with -tN -cN every connection has a session of its own (the scale-out
-- benchmark spreads sessions and connections over workers that way).
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

function session_of_thread(ids)
  local sessions = {}
  for id in string.gmatch(ids, "[^,]+") do
    table.insert(sessions, id)
  end
  return sessions[(thread_index - 1) % #sessions + 1]
end

function init(args)
  local method, params = args[4], args[5]
  check_answer = check.answer_checker(args[3], args[6], args[7], args[8])
  next_id = thread_index * 1000000000
  ok = 0
  bad = 0
  sample = ""
  headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session_of_thread(args[1]),
    ["MCP-Protocol-Version"] = args[2],
  }
  body_of = function(id)
    return check.request_body(id, method, params)
  end
end

function request()
  next_id = next_id + 1
  return wrk.format("POST", nil, headers, body_of(next_id))
end

function response(status, response_headers, body)
  local problem = check_answer(status, response_headers, body)
  if problem == nil then
    ok = ok + 1
  else
    bad = bad + 1
    if sample == "" then
      sample = check.sample(problem, status, body)
    end
  end
end

function done(summary, latency, requests)
  check.write_summary(threads, summary, latency, {})
end
