-- Shared by the service benchmarks: key, pacing and player ids.
-- EO_KEY: bearer key; EO_POOL: pool name ("bench"); EO_PLAYERS: size of the player population.
-- Pacing: EO_RATE (total requests/s, spread over EO_CONNS connections) and EO_SERVICE_MS (the
-- measured time a request takes, subtracted from each connection's wait); no EO_RATE: flat out.
local M = {}
M.key = os.getenv("EO_KEY") or ""
M.rate = tonumber(os.getenv("EO_RATE") or "0") or 0
M.conns = tonumber(os.getenv("EO_CONNS") or "64") or 64
M.service_ms = tonumber(os.getenv("EO_SERVICE_MS") or "0") or 0
M.pool = os.getenv("EO_POOL") or "bench"
M.players = tonumber(os.getenv("EO_PLAYERS") or "20000") or 20000

-- n distinct player ids drawn uniformly (a partial Fisher-Yates shuffle of a reused array).
local perm = {}
function M.team_ids(n)
  if #perm == 0 then
    for i = 1, M.players do perm[i] = i - 1 end
  end
  local ids = {}
  for i = 1, n do
    local j = math.random(i, M.players)
    perm[i], perm[j] = perm[j], perm[i]
    ids[i] = string.format("\"p%d\"", perm[i])
  end
  return ids
end

-- Each connection waits so that all together send about `rate` requests/s.
function M.delay()
  if M.rate <= 0 then return 0 end
  return math.max(0, math.floor(M.conns * 1000 / M.rate - M.service_ms))
end

-- Installs wrk's setup (numbers the threads: global `tid`), delay (pacing) and response (counts
-- non-200 answers and prints the first three, prefixed with `name`) callbacks.
function M.install(name)
  local next_thread = 0
  setup = function(thread)
    thread:set("tid", next_thread)
    next_thread = next_thread + 1
  end
  delay = M.delay
  local bad = 0
  response = function(status, headers, body)
    if status ~= 200 then
      bad = bad + 1
      if bad <= 3 then io.stderr:write(name .. ": HTTP " .. status .. " " .. body .. "\n") end
    end
  end
end

return M
