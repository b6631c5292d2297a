-- wrk script: POST /v1/pools/$EO_POOL/rounds with a fresh 12v12 round per request.
-- Round ids are unique across wrk threads: "<run>-<thread>-<counter>".
package.path = package.path .. ";" .. (os.getenv("EO_WRK_DIR") or "bench/wrk") .. "/?.lua"
local c = require("common")

c.install("rounds")

local counter = 0
local run = os.getenv("EO_RUN") or tostring(os.time())
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
end

function request()
  counter = counter + 1
  local ids = c.team_ids(24)
  local a = table.concat(ids, ",", 1, 12)
  local b = table.concat(ids, ",", 13, 24)
  local winner = (counter % 2 == 0) and "A" or "B"
  local body = string.format(
    "{\"id\":\"%s-%d-%d\",\"server\":\"bench\",\"map\":\"m\",\"started_at\":1763800000," ..
    "\"ended_at\":1763800600,\"winner\":\"%s\",\"A\":[%s],\"B\":[%s]}",
    run, tid or 0, counter, winner, a, b)
  return wrk.format("POST", "/v1/pools/" .. c.pool .. "/rounds",
    {["Authorization"] = "Bearer " .. c.key, ["Content-Type"] = "application/json"}, body)
end
