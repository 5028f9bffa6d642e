-- The checks of the HTTP benchmark's answers, shared by calls.lua, sessions.lua and stateless.lua,
-- which load this file with dofile. wrk gives every thread its own Lua state, so each loads its
-- own copy.

local check = {}

-- A response header by name, whatever its case (servers differ: uvicorn sends lower case).
function check.header(headers, name)
  local wanted = name:lower()
  for key, value in pairs(headers) do
    if key:lower() == wanted then
      return value
    end
  end
  return nil
end

-- The JSON-RPC request body of the workload, with its own id (ids must not repeat while a request
-- with that id is in flight: a duplicate is refused).
function check.request_body(id, method, params)
  return '{"jsonrpc":"2.0","id":' .. id .. ',"method":"' .. method .. '","params":' .. params .. '}'
end

-- Where the value of the first `"key"` followed by `after` (a Lua pattern, e.g. '%s*:') ends in
-- body, or nil. The key is found with a plain search (memchr, a few microseconds over 100 KiB)
-- and `after` is matched only where the key stands: an unanchored pattern such as
-- '"isError"%s*:' is tried at every byte and cost about 1 ms per 100 KiB answer, more than the
-- servers under test spent on it, and the server sat idle while wrk ran it (measured
-- 2026-11-29: wrk 1.2 ms of CPU per read-100k call, now a few tens of microseconds).
function check.find_key(body, key, after)
  local quoted = '"' .. key .. '"'
  local from = 1
  while true do
    local _, last = body:find(quoted, from, true)
    if last == nil then
      return nil
    end
    local _, value_end = body:find('^' .. after, last + 1)
    if value_end ~= nil then
      return value_end
    end
    from = last + 1
  end
end

-- A checker of the workload's answers: check_answer(status, headers, body) returns nil and the
-- answer's content type for a good answer, and a short reason otherwise. A good answer has
-- status 200, the transport's content type (JSON, or one SSE event; `content_types` names it, or
-- several separated by commas, any of which is accepted), a JSON-RPC result that is not a tool
-- error, and the workload's content:
--   kind "text": the first text block is `arg2` times the character `arg1` ("3" is "3", 1);
--   kind "tools": a `tools` list with exactly `arg1` tools (counted by their inputSchema).
function check.answer_checker(content_types, kind, arg1, arg2)
  local accepted = {}
  for accepted_type in content_types:gmatch("[^,]+") do
    accepted[#accepted + 1] = accepted_type
  end
  local expected_text
  if kind == "text" then
    expected_text = string.rep(arg1, tonumber(arg2)) .. '"'
  elseif kind ~= "tools" then
    error("unknown check kind " .. tostring(kind))
  end
  local tool_count = tonumber(arg1)

  local function content_problem(body)
    if kind == "text" then
      local quote = check.find_key(body, "text", '%s*:%s*"')
      if quote == nil then
        return "no text content"
      end
      if body:sub(quote + 1, quote + #expected_text) ~= expected_text then
        return "wrong text content"
      end
      return nil
    end
    if not check.find_key(body, "tools", "%s*:%s*%[") then
      return "no tools list"
    end
    local found, from = 0, 1
    while true do
      local _, last = body:find('"inputSchema"', from, true)
      if last == nil then
        break
      end
      found = found + 1
      from = last + 1
    end
    if found ~= tool_count then
      return found .. " tools listed"
    end
    return nil
  end

  return function(status, headers, body)
    if status ~= 200 then
      return "status " .. status
    end
    local got_type = check.header(headers, "Content-Type") or ""
    local matched = nil
    for _, accepted_type in ipairs(accepted) do
      if got_type:sub(1, #accepted_type) == accepted_type then
        matched = accepted_type
        break
      end
    end
    if matched == nil then
      return "content type " .. got_type
    end
    if not check.find_key(body, "result", "%s*:") then
      return "no JSON-RPC result"
    end
    if check.find_key(body, "isError", "%s*:%s*true") then
      return "a tool error"
    end
    local problem = content_problem(body)
    if problem ~= nil then
      return problem
    end
    return nil, matched
  end
end

-- The first bad response of a thread, kept short for the report.
function check.sample(reason, status, body)
  return reason .. " (status " .. status .. "): " .. string.sub(body, 1, 300)
end

-- A string as a JSON string literal (control characters, quotes and backslashes escaped).
function check.json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", string.byte(c))
  end) .. '"'
end

-- What done() prints for the xN scripts: one JSON line with wrk's totals, the threads' "ok" and
-- "bad" counters (and each of "extra", also a per-thread counter), the latency percentiles in
-- microseconds and the first bad answer.
function check.write_summary(threads, summary, latency, extra)
  local totals = { ok = 0, bad = 0 }
  for _, name in ipairs(extra) do
    totals[name] = 0
  end
  local first_bad = ""
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do
      totals[name] = totals[name] + thread:get(name)
    end
    if first_bad == "" then
      first_bad = thread:get("sample")
    end
  end
  local counters = ""
  for name, value in pairs(totals) do
    counters = counters .. string.format('"%s":%d,', name, value)
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,%s"socket_errors":%d,"status_errors":%d,"timeouts":%d,'
      .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d,"first_bad":%s}\n',
    summary.requests, summary.duration, counters,
    e.connect + e.read + e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), check.json_string(first_bad)))
end

return check
