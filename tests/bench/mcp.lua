-- mcp.lua: wrk script for one fixed 2026-07-28 request (loopback only).
--   MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' wrk -s mcp.lua URL
--   MCP_METHOD=resources/read MCP_NAME=info://hello wrk -s mcp.lua URL
--   MCP_TOKENS=FILE: each request sends the next token of FILE (one a line,
--   round and round) as its Bearer token
-- Prints one line: "RESULT <req/s> <p50 ms> <p99 ms> <non-2xx> <socket errors> <requests>".
local method = os.getenv("MCP_METHOD") or "tools/call"
local name = os.getenv("MCP_NAME") or "echo"
local args = os.getenv("MCP_ARGS") or "{}"
local params
if method == "resources/read" then
  params = '"uri":"' .. name .. '"'
else
  params = '"name":"' .. name .. '","arguments":' .. args
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = method
wrk.headers["Mcp-Name"] = name
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":{' .. params ..
  ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'

local tokens_file = os.getenv("MCP_TOKENS")
if tokens_file then
  local tokens, i = {}, 0
  for l in io.lines(tokens_file) do tokens[#tokens + 1] = l end
  request = function()
    i = i % #tokens + 1
    wrk.headers["Authorization"] = "Bearer " .. tokens[i]
    return wrk.format()
  end
end

done = function(summary, latency, requests)
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT %.1f %.2f %.2f %d %d %d\n", summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests))
end
