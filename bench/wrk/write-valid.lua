-- W without COMPLETE (see bench/pg/write_pipe_valid.sql): PATCH /rest/v1/user_profiles?id=eq.<uuid>
-- {"onboarding_state": "<one of seven states>"}, Prefer: return=representation, a random user per
-- request, with the harness's users, tokens and headers (its wrk/common.lua, through HARNESS_WRK):
--   HARNESS_WRK=../shared/bench/wrk wrk -t2 -c64 -d15s -s bench/wrk/write-valid.lua URL -- TOKENS
local common = dofile((os.getenv("HARNESS_WRK") or "../shared/bench/wrk") .. "/common.lua")

setup = common.setup
done = common.done

local STATES = { "NOT_STARTED", "USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW" }
local heads, tails, n

function init(args)
  local anon, users = common.load(args[1] or ".work/tokens.tsv", tonumber(args[2]))
  heads = {}
  for i, u in ipairs(users) do
    local h = common.headers(anon, u.token)
    h["Prefer"] = "return=representation"
    h["Content-Type"] = "application/json"
    local r = wrk.format("PATCH", "/rest/v1/user_profiles?id=eq." .. u.id, h)
    heads[i] = r:sub(1, -3) -- drop the blank line; the tail adds it after Content-Length
  end
  tails = {}
  for i, s in ipairs(STATES) do
    local body = '{"onboarding_state":"' .. s .. '"}'
    tails[i] = "Content-Length: " .. #body .. "\r\n\r\n" .. body
  end
  n = #heads
  common.seed()
end

function request()
  return heads[math.random(n)] .. tails[math.random(#STATES)]
end
