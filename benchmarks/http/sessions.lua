-- wrk script of the HTTP benchmark's session load (s100x20): every connection runs sessions one
-- after the other: initialize, notifications/initialized, CALLS calls of the workload, DELETE,
-- and again, for the whole run.
--
--   wrk -t100 -c100 -d S -s sessions.lua http://127.0.0.1:PORT/mcp -- PROTOCOL_VERSION \
--       CONTENT_TYPE METHOD PARAMS_JSON CHECK_KIND CHECK_ARG1 CHECK_ARG2 CALLS
--
-- wrk keeps one Lua state per thread, shared by that thread's connections, and calls request()
-- for whichever connection is ready: a state machine per session therefore needs one connection
-- per thread (-t equal to -c), so 100 sessions at once run on 100 wrk threads.
--
-- wrk's own latency counts every request (initialize, notification, calls, DELETE); this script
-- times the requests itself (CLOCK_MONOTONIC through LuaJIT's FFI, from request(), just before
-- wrk writes, to response(), just after it parsed the answer: as wrk does) and reports the
-- workload calls' latency and the time to open a session (initialize sent to the 202 of
-- notifications/initialized) on their own. done() prints one JSON line for the runner, with the
-- ids of the sessions still open when the run stopped, which the runner deletes.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local check = dofile(here .. "check.lua")
local ffi = require("ffi")

ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec_t;
int clock_gettime(int clock_id, bench_timespec_t *tp);
]])
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("bench_timespec_t")

local function now_us()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
  return tonumber(timespec.tv_sec) * 1000000 + tonumber(timespec.tv_nsec) / 1000
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_index", #threads)
end

function init(args)
  local requested_version, content_type = args[1], args[2]
  local method, params = args[3], args[4]
  calls_per_session = tonumber(args[8])
  check_answer = check.answer_checker(content_type, args[5], args[6], args[7])
  call_body = function(id)
    return check.request_body(id, method, params)
  end
  init_body = check.request_body(0, "initialize", '{"protocolVersion":"' .. requested_version
    .. '","capabilities":{},"clientInfo":{"name":"benchmarks.http","version":"1"}}')
  next_id = thread_index * 1000000000
  state = "initialize"
  session_id = ""
  session_headers = nil
  calls_left = 0
  sent_at = 0
  open_started = 0
  -- Figures read by done(): counters, the first bad answer, and the latencies in microseconds.
  calls = 0
  sessions = 0
  bad = 0
  sample = ""
  call_latencies = {}
  open_latencies = {}
end

function request()
  sent_at = now_us()
  if state == "initialize" then
    open_started = sent_at
    return wrk.format("POST", nil, {
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
    }, init_body)
  elseif state == "initialized" then
    return wrk.format("POST", nil, session_headers,
      '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  elseif state == "call" then
    next_id = next_id + 1
    return wrk.format("POST", nil, session_headers, call_body(next_id))
  end
  return wrk.format("DELETE", nil, session_headers)
end

local function failed(problem, status, body)
  bad = bad + 1
  if sample == "" then
    sample = state .. ": " .. check.sample(problem, status, body)
  end
  -- Start over with a new session (the server may still hold this one: the runner deletes it).
  state = "initialize"
end

local function opened(headers, body)
  local id = check.header(headers, "Mcp-Session-Id")
  local version = body:match('"protocolVersion"%s*:%s*"([^"]+)"')
  if id == nil or version == nil then
    return false
  end
  session_id = id
  session_headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = id,
    ["MCP-Protocol-Version"] = version,
  }
  return true
end

function response(status, headers, body)
  local now = now_us()
  if state == "initialize" then
    if status ~= 200 or not check.find_key(body, "result", "%s*:") or not opened(headers, body) then
      return failed("no session", status, body)
    end
    state = "initialized"
  elseif state == "initialized" then
    if status ~= 202 then
      return failed("notification refused", status, body)
    end
    open_latencies[#open_latencies + 1] = now - open_started
    state = "call"
    calls_left = calls_per_session
  elseif state == "call" then
    local problem = check_answer(status, headers, body)
    if problem ~= nil then
      return failed(problem, status, body)
    end
    calls = calls + 1
    call_latencies[#call_latencies + 1] = now - sent_at
    calls_left = calls_left - 1
    if calls_left == 0 then
      state = "delete"
    end
  else
    if status < 200 or status >= 300 then
      return failed("DELETE refused", status, body)
    end
    sessions = sessions + 1
    session_id = ""
    state = "initialize"
  end
end

-- The p-th percentile (nearest rank) of a sorted list, 0 when empty.
local function percentile(sorted, p)
  if #sorted == 0 then
    return 0
  end
  local rank = math.ceil(p / 100 * #sorted)
  return sorted[math.max(rank, 1)]
end

function done(summary, latency, requests)
  local totals = { calls = 0, sessions = 0, bad = 0 }
  local call_all, open_all, open_ids, first_bad = {}, {}, {}, ""
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do
      totals[name] = totals[name] + thread:get(name)
    end
    for _, value in ipairs(thread:get("call_latencies")) do
      call_all[#call_all + 1] = value
    end
    for _, value in ipairs(thread:get("open_latencies")) do
      open_all[#open_all + 1] = value
    end
    local id = thread:get("session_id")
    if id ~= "" then
      open_ids[#open_ids + 1] = check.json_string(id)
    end
    if first_bad == "" then
      first_bad = thread:get("sample")
    end
  end
  table.sort(call_all)
  table.sort(open_all)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"ok":%d,"sessions":%d,"bad":%d,"socket_errors":%d,'
      .. '"status_errors":%d,"timeouts":%d,"p50_us":%.1f,"p90_us":%.1f,"p99_us":%.1f,'
      .. '"p999_us":%.1f,"open_p50_us":%.1f,"open_p99_us":%.1f,"open_sessions":[%s],'
      .. '"first_bad":%s}\n',
    summary.requests, summary.duration, totals.calls, totals.sessions, totals.bad,
    e.connect + e.read + e.write, e.status, e.timeout,
    percentile(call_all, 50), percentile(call_all, 90), percentile(call_all, 99),
    percentile(call_all, 99.9), percentile(open_all, 50), percentile(open_all, 99),
    table.concat(open_ids, ","), check.json_string(first_bad)))
end
