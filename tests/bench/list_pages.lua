-- list_pages.lua: wrk script posting 2026-07-28 requests of the list method
-- named by the environment variable METHOD (resources/list, skills/list...),
-- cycling through the bodies (one JSON request per line) in the file named
-- by BODIES; any answer without the method's array (resources, skills...)
-- counts as bad.
local method = os.getenv("METHOD")
local array = '"' .. method:match("^[^/]+") .. '":%['
local bodies = {}
for line in io.lines(os.getenv("BODIES")) do bodies[#bodies + 1] = line end
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = method
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
local errors = 0
response = function(status, headers, body)
  if status ~= 200 or not body:find(array) then errors = errors + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("bad responses: %d\n", errors))
end
