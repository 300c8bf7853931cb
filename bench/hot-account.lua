-- One hot account: every request a transfer of 1 FROM the same source account (the seed's, funded with
-- 10^15) to one of the thread's own accounts in turn, a fresh Idempotency-Key per request. Every transfer
-- locks the source's row, so they all queue on that one lock, whatever the connections.
-- args: run-id threads source-file accounts-file
local common = dofile("bench/common.lua")
setup = common.setup
done = common.done

local source, mine, n, run, headers

function init(args)
  run = args[1] .. (os.getenv("BENCH_PHASE") or "")
  source = common.load_accounts(args[3])[1]
  mine = common.my_accounts(args[4], tonumber(args[2]))
  n = 0
  headers = common.headers(true)
end

function request()
  local credit = mine[n % #mine + 1]
  n = n + 1
  headers["Idempotency-Key"] = "hot-" .. run .. "-" .. id .. "-" .. n
  return wrk.format("POST", "/transfers", headers,
    '{"debitAccountId":"' .. source .. '","creditAccountId":"' .. credit .. '","amount":1}')
end

function response(status, resp_headers, body)
  common.count(status == 201 and not common.replayed(resp_headers), status)
end
