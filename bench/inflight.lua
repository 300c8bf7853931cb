-- In-flight duplicates: every group of consecutive requests of a thread (as many as it has
-- connections) shares one key, so they reach the service together; expected answers are the
-- one 201 (or its replay) and 409 request-in-progress.
-- args: run-id threads group accounts-file; BENCH_SEQ_BASE: the first sequence
local common = dofile("bench/common.lua")
setup = common.setup
done = common.done

local mine, n, run, group, base, headers

function init(args)
  run = args[1] .. (os.getenv("BENCH_PHASE") or "")
  base = tonumber(os.getenv("BENCH_SEQ_BASE"))
  group = tonumber(args[3])
  mine = common.my_accounts(args[4], tonumber(args[2]))
  n = 0
  headers = common.headers(true)
end

function request()
  local k = math.floor(n / group)
  n = n + 1
  headers["Idempotency-Key"] = "dup-" .. run .. "-" .. id .. "-" .. k
  return wrk.format("POST", "/accounts/" .. mine[k % #mine + 1] .. "/transactions", headers,
    '{"type":"CREDIT","amount":1,"sequence":' .. string.format("%.0f", base + k) .. '}')
end

function response(status, resp_headers, body)
  common.count(status == 201 or (status == 409 and body:find("request-in-progress", 1, true) ~= nil), status)
end
