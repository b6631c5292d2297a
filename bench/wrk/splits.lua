-- wrk script: POST /v1/pools/$EO_POOL/splits with 24 player ids (ratings read from the store).
package.path = package.path .. ";" .. (os.getenv("EO_WRK_DIR") or "bench/wrk") .. "/?.lua"
local c = require("common")

c.install("splits")

function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
end

function request()
  local body = "{\"players\":[" .. table.concat(c.team_ids(24), ",") .. "]}"
  return wrk.format("POST", "/v1/pools/" .. c.pool .. "/splits",
    {["Authorization"] = "Bearer " .. c.key, ["Content-Type"] = "application/json"}, body)
end
