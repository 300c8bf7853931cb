-- Transfers: POST /transfers of 1 between two of the thread's own accounts, a fresh Idempotency-Key per
-- request, posted at once, each leg at its account's lastSequence + 1 (no sequences sent). Each thread owns
-- its own accounts (index mod threads), so no two threads lock one account. Request n takes the debit account
-- n (mod the thread's count) and the credit account half the accounts or more further on, the distance
-- growing by one per cycle through them: every account sends one and receives one per cycle (balances stay
-- where the seed put them), partners change from cycle to cycle, and the requests in flight together (a few
-- dozen) never share an account.
-- args: run-id threads accounts-file
local common = dofile("bench/common.lua")
setup = common.setup
done = common.done

local mine, n, run, headers

function init(args)
  run = args[1] .. (os.getenv("BENCH_PHASE") or "")
  mine = common.my_accounts(args[3], tonumber(args[2]))
  if #mine < 2 then error("transfers.lua: a thread needs two accounts at least") end
  n = 0
  headers = common.headers(true)
end

function request()
  local m = #mine
  local i = n % m
  local cycle = math.floor(n / m)
  local half = math.floor(m / 2)
  local offset = half + cycle % math.max(1, math.floor(m / 4))
  n = n + 1
  headers["Idempotency-Key"] = "transfer-" .. run .. "-" .. id .. "-" .. n
  return wrk.format("POST", "/transfers", headers,
    '{"debitAccountId":"' .. mine[i + 1] .. '","creditAccountId":"' .. mine[(i + offset) % m + 1] .. '","amount":1}')
end

function response(status, resp_headers, body)
  common.count(status == 201 and not common.replayed(resp_headers), status)
end
