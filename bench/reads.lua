-- Reads: GET /accounts/{id} of random seeded accounts.
local common = dofile("bench/common.lua")
setup = common.setup
done = common.done

local accounts, headers

function init(args)
  accounts = common.load_accounts(args[1])
  math.randomseed(id + 1)
  headers = common.headers(false)
end

function request()
  return wrk.format("GET", "/accounts/" .. accounts[math.random(#accounts)], headers)
end

function response(status, resp_headers, body)
  common.count(status == 200, status)
end
