-- wrk script of the HTTP benchmark: every request is one `tools/call` of add(1, 2) on an
-- initialized Streamable HTTP session.
--
--   wrk -t T -c C -d D -s calls.lua http://127.0.0.1:PORT/mcp -- SESSION_ID PROTOCOL_VERSION
--
-- JSON-RPC ids must not repeat while a request with that id is in flight (a duplicate is
-- refused with -32600), so every request gets its own id: a counter per wrk thread (all the
-- connections of a thread share its Lua state), offset by the thread's number.
-- Every response is checked: status 200 and a result carrying "3" (JSON or one SSE event).
-- done() prints one JSON line that the orchestrator reads.

local threads = {}
local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_index", thread_count)
  table.insert(threads, thread)
end

function init(args)
  session_id = args[1]
  protocol_version = args[2]
  next_id = thread_index * 1000000000
  ok = 0
  bad = 0
  sample = ""
  headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session_id,
    ["MCP-Protocol-Version"] = protocol_version,
  }
end

function request()
  next_id = next_id + 1
  local body = '{"jsonrpc":"2.0","id":' .. next_id
    .. ',"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
  return wrk.format("POST", nil, headers, body)
end

function response(status, headers, body)
  if status == 200 and body:find('"result":', 1, true) and body:find('"text":"3"', 1, true)
    and not body:find('"isError":true', 1, true) then
    ok = ok + 1
  else
    bad = bad + 1
    if sample == "" then
      sample = status .. " " .. string.sub(body, 1, 300)
    end
  end
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", string.byte(c))
  end) .. '"'
end

function done(summary, latency, requests)
  local ok_total, bad_total, first_bad = 0, 0, ""
  for _, thread in ipairs(threads) do
    ok_total = ok_total + thread:get("ok")
    bad_total = bad_total + thread:get("bad")
    if first_bad == "" then
      first_bad = thread:get("sample")
    end
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"ok":%d,"bad":%d,"socket_errors":%d,"status_errors":%d,'
      .. '"timeouts":%d,"latency_p50_us":%d,"latency_p99_us":%d,"first_bad":%s}\n',
    summary.requests, summary.duration, ok_total, bad_total,
    e.connect + e.read + e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), json_string(first_bad)))
end
