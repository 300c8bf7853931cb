-- Replays: completed keys sent again (seeded by run.sh), all answered from Redis as replays.
local common = dofile("bench/common.lua")
setup = common.setup
done = common.done

local lines, cursor, headers

function init(args)
  lines = {}
  for line in io.lines(args[1]) do
    local key, account, body = line:match("^(%S+) (%S+) (.+)$")
    if key then lines[#lines + 1] = {key, account, body} end
  end
  cursor = id * 7919 % #lines
  headers = common.headers(true)
end

function request()
  cursor = cursor % #lines + 1
  local l = lines[cursor]
  headers["Idempotency-Key"] = l[1]
  return wrk.format("POST", "/accounts/" .. l[2] .. "/transactions", headers, l[3])
end

function response(status, resp_headers, body)
  common.count(common.replayed(resp_headers), status)
end
