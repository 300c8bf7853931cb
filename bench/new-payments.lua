-- New payments: a fresh Idempotency-Key per request, per-account increasing sequences.
-- Each thread owns its own accounts (index mod threads), so its sequences never race another's;
-- a thread cycles through hundreds of accounts, so one account's requests arrive in order.
-- args: run-id threads accounts-file; BENCH_SEQ_BASE: the first sequence (above all earlier runs)
local common = dofile("bench/common.lua")
setup = common.setup
done = common.done

local mine, seq, n, cursor, run, headers

function init(args)
  run = args[1] .. (os.getenv("BENCH_PHASE") or "")
  local base = tonumber(os.getenv("BENCH_SEQ_BASE"))
  mine, seq = common.my_accounts(args[3], tonumber(args[2])), {}
  for _, account in ipairs(mine) do seq[account] = base end
  n, cursor = 0, 0
  headers = common.headers(true)
end

function request()
  cursor = cursor % #mine + 1
  local account = mine[cursor]
  seq[account] = seq[account] + 1
  n = n + 1
  headers["Idempotency-Key"] = "pay-" .. run .. "-" .. id .. "-" .. n
  return wrk.format("POST", "/accounts/" .. account .. "/transactions", headers,
    '{"type":"CREDIT","amount":1,"sequence":' .. string.format("%.0f", seq[account]) .. '}')
end

function response(status, resp_headers, body)
  common.count(status == 201 and not common.replayed(resp_headers), status)
end
