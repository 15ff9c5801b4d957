-- tasks.lua: wrk script posting 2026-07-28 tasks/get requests, cycling
-- through the lines of the file named by the environment variable BODIES
-- (each "TASKID<TAB>JSON"), with Mcp-Name set to the task's id; any answer
-- without a task status counts as bad.
local lines = {}
for line in io.lines(os.getenv("BODIES")) do
  local id, body = line:match("^([^\t]+)\t(.*)$")
  lines[#lines + 1] = { id = id, body = body }
end
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
request = function()
  i = i % #lines + 1
  local l = lines[i]
  local h = { ["Mcp-Method"] = l.id == "-" and "server/discover" or "tasks/get" }
  if l.id ~= "-" then h["Mcp-Name"] = l.id end
  return wrk.format(nil, nil, h, l.body)
end
local errors = 0
response = function(status, headers, body)
  if status ~= 200 or not (body:find('"status":"completed"') or body:find('"capabilities"')) then
    errors = errors + 1
  end
end
done = function(summary, latency, requests)
  io.write(string.format("bad responses: %d\n", errors))
end
