-- wrk script for the process-model tests: every request POSTs the JSON-RPC
-- message in $WRK_BODY with the routing headers of $WRK_METHOD (2026-07-28),
-- and every response is counted by its status over all threads. At the end
-- one line: "ok200=N non200=N socket_errors=N".
--   WRK_BODY='{...}' WRK_METHOD=server/discover wrk -s tests/wrk-status.lua URL
local threads = {}

wrk.method = "POST"
wrk.body = os.getenv("WRK_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = os.getenv("WRK_METHOD") or "server/discover"

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  ok200 = 0
  non200 = 0
end

function response(status, headers, body)
  if status == 200 then
    ok200 = ok200 + 1
  else
    non200 = non200 + 1
  end
end

function done(summary, latency, requests)
  local good, bad = 0, 0
  for _, t in ipairs(threads) do
    good = good + t:get("ok200")
    bad = bad + t:get("non200")
  end
  local e = summary.errors
  io.write(string.format("ok200=%d non200=%d socket_errors=%d\n", good, bad,
    e.connect + e.read + e.write + e.timeout))
end
