#!/usr/bin/env bash
# Builds the HTTP parser's libFuzzer target and runs it: `fuzz/run.sh [seconds]` (default 15).
# Crashes, hangs (> 2 s per input) and leaks fail the run; artifacts go to .build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-15}"
out=.build/fuzz
mkdir -p "$out/corpus"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name HTTPFuzz \
  Sources/HTTP/Parser.swift Sources/HTTP/Message.swift Sources/HTTP/Limits.swift fuzz/HTTPParserFuzz.swift \
  -o "$out/http-parser" 2>"$out/build.log" || { cat "$out/build.log" >&2; exit 1; }
# Seeds: what real clients send, and the shapes the parser refuses.
printf 'GET /rest/v1/children?select=*&user_id=eq.1 HTTP/1.1\r\nHost: x\r\napikey: k\r\n\r\n' >"$out/corpus/get"
printf 'POST /auth/v1/signup HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}' >"$out/corpus/post"
printf 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n0\r\nTrailer: t\r\n\r\n' >"$out/corpus/chunked"
printf 'GET / HTTP/1.0\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\nConnection: close\r\n\r\n' >"$out/corpus/pipelined"
printf 'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab' >"$out/corpus/conflict"
printf 'PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc' >"$out/corpus/expect"
"$out/http-parser" "$out/corpus" -max_total_time="$seconds" -max_len=4096 -timeout=2 \
  -artifact_prefix="$out/" -print_final_stats=1 2>&1 | tee "$out/last.log" | grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|ERROR|SUMMARY" || true
if grep -qE "ERROR: |SUMMARY: |deadly signal|timeout" "$out/last.log"; then
  echo "fuzzing found a failure: see $out/last.log and the crash-* artifact" >&2
  exit 1
fi
echo "fuzz: $(grep -oE 'stat::number_of_executed_units: [0-9]+' "$out/last.log" | awk '{print $2}') inputs in ${seconds}s, no failure"
