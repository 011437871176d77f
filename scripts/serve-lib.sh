# Sourced by the test scripts (with $binary set to the onboard executable).

# The phone numbers tests/e2e/test_phone.py signs in with, and their fixed codes (SMS_TEST_OTP:
# no SMS is sent to them), for every server that suite runs against.
e2e_sms_test_otp=15550001001:111111,15550001002:222222,15550001003:333333

# Web3 sign-in (tests/e2e/test_web3.py): both chains on, and the app the wallets sign in to
# (its messages' domain and URI) on the allow list, for every server that suite runs against.
e2e_web3_env=(EXTERNAL_WEB3_ETHEREUM_ENABLED=true EXTERNAL_WEB3_SOLANA_ENABLED=true "URI_ALLOW_LIST=https://wallet.e2e.example/**")

# Passkeys (tests/e2e/test_passkeys.py): on, for the relying party the software authenticator
# registers with, for every server that suite runs against.
e2e_passkey_env=(PASSKEY_ENABLED=true WEBAUTHN_RP_ID=passkey.e2e.example "WEBAUTHN_RP_DISPLAY_NAME=onboard e2e" WEBAUTHN_RP_ORIGINS=https://passkey.e2e.example)

# free_ports N: N distinct TCP ports on 127.0.0.1, free when chosen. The sockets stay open
# together until all are chosen, so the kernel never hands out one twice.
free_ports() {
  python3 -c 'import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s)
print(" ".join(str(s.getsockname()[1]) for s in held))' "$1"
}
free_port() { free_ports 1; }

# serve_onboard LOG [serve's arguments...]: starts `onboard serve` on a free port, in the
# background, and waits until /health answers. A port is free when chosen but can be taken
# before the server binds it (by any process binding port 0 meanwhile); a server that exits
# with "Address already in use" is started again on another port. Variables given before the
# call reach the server. Sets $served_port and $served_pid; when it exits otherwise, or does not
# answer within two minutes, prints its log and exits 1.
serve_onboard() {
  local log=$1
  shift
  local attempt
  for attempt in 1 2 3 4 5; do
    served_port=$(free_port)
    "$binary" serve --port "$served_port" "$@" >"$log" 2>&1 &
    served_pid=$!
    local tries=0
    while kill -0 "$served_pid" 2>/dev/null; do
      if curl -fsS "http://127.0.0.1:$served_port/health" >/dev/null 2>&1; then return 0; fi
      tries=$((tries + 1))
      if [ "$tries" -ge 600 ]; then
        echo "the server on port $served_port did not answer /health within two minutes:" >&2
        cat "$log" >&2
        kill -TERM "$served_pid" 2>/dev/null || true
        exit 1
      fi
      sleep 0.2
    done
    wait "$served_pid" 2>/dev/null || true
    grep -q "Address already in use" "$log" || break
    echo "port $served_port was taken before the server bound it; trying another" >&2
  done
  echo "the server on port $served_port exited:" >&2
  cat "$log" >&2
  exit 1
}
