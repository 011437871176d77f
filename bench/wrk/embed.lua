-- E: the profile with its current child in one call, as an app resumes onboarding:
--   GET /rest/v1/user_profiles?select=id,onboarding_state,children!current_child_id(name,age)&id=eq.<uuid>
-- with the harness's users, tokens and headers (its wrk/common.lua, found through HARNESS_WRK):
--   HARNESS_WRK=../shared/bench/wrk wrk -t2 -c64 -d15s -s bench/wrk/embed.lua URL -- TOKENS
local common = dofile((os.getenv("HARNESS_WRK") or "../shared/bench/wrk") .. "/common.lua")

setup = common.setup
done = common.done

local requests, n

function init(args)
  local anon, users = common.load(args[1] or ".work/tokens.tsv", tonumber(args[2]))
  requests = {}
  for i, u in ipairs(users) do
    requests[i] = wrk.format("GET", "/rest/v1/user_profiles?select=id,onboarding_state,children%21current_child_id%28name,age%29&id=eq." .. u.id,
                             common.headers(anon, u.token))
  end
  n = #requests
  common.seed()
end

function request()
  return requests[math.random(n)]
end
