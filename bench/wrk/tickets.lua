-- wrk script: POST /v1/queues/$EO_QUEUE/tickets, one new player per ticket (a party of
-- EO_PARTY players every EO_PARTY_EVERY tickets, when set). Ticket and player ids are unique
-- across wrk threads and runs: "<run>-<thread>-<counter>".
package.path = package.path .. ";" .. (os.getenv("EO_WRK_DIR") or "bench/wrk") .. "/?.lua"
local c = require("common")

c.install("tickets")
-- tickets are created with 201
local counted = response
response = function(status, headers, body)
  if status ~= 201 then counted(status, headers, body) end
end

local queue = os.getenv("EO_QUEUE") or "bench"
local run = os.getenv("EO_RUN") or tostring(os.time())
local counter = 0

function request()
  counter = counter + 1
  local id = string.format("%s-%d-%d", run, tid or 0, counter)
  local body = string.format("{\"id\":\"%s\",\"players\":[{\"id\":\"p%s\"}]}", id, id)
  return wrk.format("POST", "/v1/queues/" .. queue .. "/tickets",
    {["Authorization"] = "Bearer " .. c.key, ["Content-Type"] = "application/json"}, body)
end
