-- Shared by the wrk scenarios: accounts, the API key, and the share of expected answers.
-- Each wrk thread has its own Lua state; done() adds up the threads' counters.
local common = {}

local threads = {}
local next_id = 0

function common.setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function common.load_accounts(path)
  local accounts = {}
  for line in io.lines(path) do
    if #line > 0 then accounts[#accounts + 1] = line end
  end
  return accounts
end

-- this thread's share of the accounts (index mod threads): no two threads touch one account
function common.my_accounts(path, nthreads)
  local mine = {}
  for i, account in ipairs(common.load_accounts(path)) do
    if (i - 1) % nthreads == id then mine[#mine + 1] = account end
  end
  return mine
end

function common.headers(with_body)
  local h = {}
  if with_body then h["Content-Type"] = "application/json" end
  local key = os.getenv("LEDGER_BENCH_API_KEY")
  if key and #key > 0 then h["Authorization"] = "Bearer " .. key end
  return h
end

-- common.replayed(resp_headers): whether the answer carries Idempotent-Replayed: true. Header names
-- in any case: HAProxy (the balanced scenario) sends them in lower case.
function common.replayed(resp_headers)
  return (resp_headers["Idempotent-Replayed"] or resp_headers["idempotent-replayed"]) == "true"
end

-- counters live in each thread's globals: expected, unexpected, statuses["201"] ...
function common.count(ok, status)
  if ok then expected = (expected or 0) + 1 else unexpected = (unexpected or 0) + 1 end
  statuses = statuses or {}
  local s = tostring(status)
  statuses[s] = (statuses[s] or 0) + 1
end

function common.done(summary, latency, requests)
  local ok, bad, by_status = 0, 0, {}
  for _, thread in ipairs(threads) do
    ok = ok + (thread:get("expected") or 0)
    bad = bad + (thread:get("unexpected") or 0)
    local s = thread:get("statuses") or {}
    for k, v in pairs(s) do by_status[k] = (by_status[k] or 0) + v end
  end
  local parts = {}
  for k, v in pairs(by_status) do parts[#parts + 1] = k .. ":" .. v end
  table.sort(parts)
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d rps=%.1f p50_ms=%.2f p99_ms=%.2f expected_share=%.4f statuses=%s socket_errors=%d\n",
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    (ok + bad) > 0 and ok / (ok + bad) or 0, table.concat(parts, ","),
    e.connect + e.read + e.write + e.timeout))
end

return common
