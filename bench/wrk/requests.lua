-- Varied requests for one wrk run (rules, A/B and unknown-slug cases): the first argument after `--` names a
-- file with one request per line, "path<TAB>Header: value<TAB>Header: value…". Every request is formatted
-- once in init(); request() only hands out the next prepared string, so wrk spends no time building them.
local prepared = {}
local count, index = 0, 0

init = function(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    if line ~= "" then
      local path, headers = nil, {}
      for field in string.gmatch(line, "[^\t]+") do
        if path == nil then
          path = field
        else
          local name, value = string.match(field, "^([^:]+):%s*(.*)$")
          headers[name] = value
        end
      end
      count = count + 1
      prepared[count] = wrk.format("GET", path, headers)
    end
  end
  file:close()
  assert(count > 0, "no requests in " .. args[1])
end

request = function()
  index = index % count + 1
  return prepared[index]
end
