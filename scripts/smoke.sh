#!/usr/bin/env bash
# Smoke test for any onboard (or Supabase) deployment, with curl and jq only:
#   ANON_KEY=... scripts/smoke.sh http://127.0.0.1:54321
# Signs up two throw-away users, walks the onboarding calls the apps make, checks that the
# second user sees none of the first one's rows, refreshes, logs out, and deletes both users.
# One line per step; the first failure prints the response and exits 1.
set -euo pipefail

base=${1:-${ONBOARD_URL:-http://127.0.0.1:54321}}
base=${base%/}
: "${ANON_KEY:?set ANON_KEY to the anon key of the deployment, see onboard keys or .env}"
command -v curl >/dev/null && command -v jq >/dev/null || { echo "smoke.sh needs curl and jq" >&2; exit 2; }

step=0
status=""
body=""

# call METHOD PATH [TOKEN] [BODY] [EXTRA HEADER...]: sets $status and $body.
call() {
  local method=$1 path=$2 token=${3:-$ANON_KEY} data=${4:-} out
  shift 4 2>/dev/null || shift $#
  local args=(-sS -X "$method" "$base$path" -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token"
              -H "Content-Type: application/json" -H "X-Supabase-Api-Version: 2024-01-01" -w $'\n%{http_code}')
  for header in "$@"; do args+=(-H "$header"); done
  [ -n "$data" ] && args+=(--data "$data")
  out=$(curl "${args[@]}") || { status=000; body="curl failed"; return 0; }
  status=${out##*$'\n'}
  body=${out%$'\n'*}
}

# check NAME EXPECTED_STATUS [JQ_CONDITION]: the last call's status and, if given, a jq test.
check() {
  local name=$1 expected=$2 condition=${3:-}
  step=$((step + 1))
  if [ "$status" != "$expected" ] || { [ -n "$condition" ] && ! jq -e "$condition" >/dev/null 2>&1 <<<"$body"; }; then
    printf 'FAIL %2d %s\n     expected HTTP %s%s, got %s:\n     %s\n' "$step" "$name" "$expected" \
      "${condition:+ and $condition}" "$status" "$body" >&2
    exit 1
  fi
  printf 'ok   %2d %s\n' "$step" "$name"
}

suffix=$(date +%s)-$RANDOM$RANDOM
password="Smoke-$RANDOM-$RANDOM-pass"

call GET /health "" ""
check "health" 200

call POST /auth/v1/signup "" "{\"email\":\"smoke-a-$suffix@example.com\",\"password\":\"$password\",\"data\":{\"full_name\":\"Smoke A\"}}"
check "sign up user A" 200 '.access_token and .refresh_token and .user.id'
token_a=$(jq -r .access_token <<<"$body"); refresh_a=$(jq -r .refresh_token <<<"$body"); id_a=$(jq -r .user.id <<<"$body")

call GET "/rest/v1/user_profiles?select=*&id=eq.$id_a" "$token_a" ""
check "read A's trigger-created profile" 200 'length == 1 and .[0].onboarding_state == "NOT_STARTED"'

call PATCH "/rest/v1/user_profiles?id=eq.$id_a" "$token_a" '{"onboarding_state":"USER_INFO"}' "Prefer: return=representation"
check "PATCH A's onboarding state" 200 'length == 1 and .[0].onboarding_state == "USER_INFO"'

call POST "/rest/v1/children" "$token_a" \
  "{\"user_id\":\"$id_a\",\"name\":\"Smoke Kid\",\"birthday\":\"2020-05-14\",\"goals\":[\"sleep\"],\"topics\":[\"a\",\"b\",\"c\"],\"temperament_sensitivity\":7}" \
  "Prefer: return=representation"
check "insert a child with return=representation" 201 'length == 1 and .[0].name == "Smoke Kid" and .[0].birthday == "2020-05-14"'
child=$(jq -r '.[0].id' <<<"$body")

call GET "/rest/v1/children?select=*&id=eq.$child" "$token_a" ""
check "read the child back" 200 "length == 1 and .[0].user_id == \"$id_a\" and .[0].temperament_sensitivity == 7"

call POST /rest/v1/rpc/get_user_with_profile "$token_a" "{\"p_user_id\":\"$id_a\"}"
check "rpc get_user_with_profile" 200 ".[0].user_id == \"$id_a\" and .[0].display_name == \"Smoke A\" and .[0].onboarding_state == \"USER_INFO\""

call POST /auth/v1/signup "" "{\"email\":\"smoke-b-$suffix@example.com\",\"password\":\"$password\"}"
check "sign up user B" 200 '.access_token'
token_b=$(jq -r .access_token <<<"$body")

call GET "/rest/v1/children?select=*&user_id=eq.$id_a" "$token_b" ""
check "B sees none of A's children" 200 'length == 0'
call GET "/rest/v1/user_profiles?select=*&id=eq.$id_a" "$token_b" ""
check "B sees no profile of A" 200 'length == 0'
call PATCH "/rest/v1/user_profiles?id=eq.$id_a" "$token_b" '{"onboarding_state":"COMPLETE"}' "Prefer: return=representation"
check "B's PATCH of A's profile changes nothing" 200 'length == 0'
call POST /rest/v1/rpc/get_user_with_profile "$token_b" "{\"p_user_id\":\"$id_a\"}"
check "B's get_user_with_profile(A) is empty" 200 'length == 0'
call GET "/rest/v1/user_profiles?select=onboarding_state&id=eq.$id_a" "$token_a" ""
check "A's profile is unchanged" 200 '.[0].onboarding_state == "USER_INFO"'

call POST "/auth/v1/token?grant_type=refresh_token" "" "{\"refresh_token\":\"$refresh_a\"}"
check "refresh A's session" 200 ".access_token and .refresh_token != \"$refresh_a\" and .user.id == \"$id_a\""
token_a=$(jq -r .access_token <<<"$body"); refresh_a=$(jq -r .refresh_token <<<"$body")
call GET /auth/v1/user "$token_a" ""
check "the refreshed token reads /auth/v1/user" 200 ".id == \"$id_a\""

call POST /rest/v1/rpc/delete_account "$token_b" "{}"
check "B deletes its account" 204

call POST "/auth/v1/logout" "$token_a" ""
check "log A out" 204
call POST "/auth/v1/token?grant_type=refresh_token" "" "{\"refresh_token\":\"$refresh_a\"}"
check "A's refresh token is refused after logout" 400
call GET /auth/v1/user "$token_a" ""
check "A's access token is refused by /user after logout" 403 '.code == "session_not_found"'

# Clean up A with a fresh session (deletes the child by cascade).
call POST "/auth/v1/token?grant_type=password" "" "{\"email\":\"smoke-a-$suffix@example.com\",\"password\":\"$password\"}"
check "sign A in again" 200 '.access_token'
call POST /rest/v1/rpc/delete_account "$(jq -r .access_token <<<"$body")" "{}"
check "A deletes its account" 204

echo "smoke test passed: $step steps against $base"
