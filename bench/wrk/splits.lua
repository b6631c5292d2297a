-- wrk script: POST /v1/pools/$EO_POOL/splits with 24 player ids (ratings read from the store).
package.path = package.path .. ";" .. (os.getenv("EO_WRK_DIR") or "bench/wrk") .. "/?.lua"
local c = require("common")

local next_thread = 0
function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
end

function request()
  local body = "{\"players\":[" .. table.concat(c.team_ids(24), ",") .. "]}"
  return wrk.format("POST", "/v1/pools/" .. c.pool .. "/splits",
    {["Authorization"] = "Bearer " .. c.key, ["Content-Type"] = "application/json"}, body)
end

function delay()
  return c.delay()
end

local bad = 0
function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    if bad <= 3 then io.stderr:write("splits: HTTP " .. status .. " " .. body .. "\n") end
  end
end
