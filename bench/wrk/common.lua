-- Shared by the service benchmarks: key, pacing and a per-thread id for unique round ids.
-- EO_KEY: bearer key; EO_POOL: pool name ("bench"); EO_PLAYERS: size of the player population.
-- Pacing, either EO_PACE_MS (wait per connection between requests, ms) or EO_RATE (total
-- requests/s, spread over EO_CONNS connections); neither: as fast as possible.
local M = {}
M.key = os.getenv("EO_KEY") or ""
M.rate = tonumber(os.getenv("EO_RATE") or "0") or 0
M.conns = tonumber(os.getenv("EO_CONNS") or "64") or 64
M.pool = os.getenv("EO_POOL") or "bench"
M.pace_ms = tonumber(os.getenv("EO_PACE_MS") or "0") or 0
M.players = tonumber(os.getenv("EO_PLAYERS") or "20000") or 20000

-- 24 distinct player ids: a random start and a stride that cannot wrap onto itself.
function M.team_ids(n)
  local base = math.random(0, M.players - 1)
  local step = math.floor(M.players / n)
  local ids = {}
  for i = 0, n - 1 do
    ids[#ids + 1] = string.format("\"p%d\"", (base + i * step) % M.players)
  end
  return ids
end

-- Each connection waits conns/rate seconds between requests, so all together send about
-- `rate` requests/s (a little less: the service time is not subtracted).
function M.delay()
  if M.pace_ms > 0 then return M.pace_ms end
  if M.rate <= 0 then return 0 end
  return math.floor(M.conns * 1000 / M.rate)
end

return M
