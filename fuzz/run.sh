#!/usr/bin/env bash
# Builds the libFuzzer targets (the HTTP parser, the WebSocket frame decoder, the whole request
# path short of I/O) and runs each:
# `fuzz/run.sh [seconds]` (default 15 per target).
# Crashes, hangs (> 2 s per input) and leaks fail the run; artifacts go to .build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-15}"
out=.build/fuzz
mkdir -p "$out/corpus"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name HTTPFuzz \
  Sources/HTTP/Parser.swift Sources/HTTP/Message.swift Sources/HTTP/Limits.swift Sources/HTTP/Method.swift Sources/HTTP/Status.swift \
  fuzz/ParserStubs.swift fuzz/HTTPParserFuzz.swift \
  -o "$out/http-parser" 2>"$out/build.log" || { cat "$out/build.log" >&2; exit 1; }
# Seeds: what real clients send, and the shapes the parser refuses.
printf 'GET /rest/v1/children?select=*&user_id=eq.1 HTTP/1.1\r\nHost: x\r\napikey: k\r\n\r\n' >"$out/corpus/get"
printf 'POST /auth/v1/signup HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}' >"$out/corpus/post"
printf 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n0\r\nTrailer: t\r\n\r\n' >"$out/corpus/chunked"
printf 'GET / HTTP/1.0\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\nConnection: close\r\n\r\n' >"$out/corpus/pipelined"
printf 'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab' >"$out/corpus/conflict"
printf 'PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc' >"$out/corpus/expect"
# Each target's libFuzzer stats (-print_final_stats=1: its `stat::…` lines) and the verdict go to
# $reports/<name>.stats, which scripts/test-report reads.
reports="${TEST_REPORTS:-.build/test-reports}/fuzz"
mkdir -p "$reports"
rm -f "$reports"/*.stats
run() {  # name, corpus, max_len[, read-only seed folder]
  "$out/$1" "$2" ${4:-} -max_total_time="$seconds" -max_len="$3" -timeout=2 \
    -artifact_prefix="$out/$1-" -print_final_stats=1 2>&1 | tee "$out/$1.log" | grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|ERROR|SUMMARY" || true
  local result=ok
  grep -qE "ERROR: |SUMMARY: |deadly signal|timeout|Program crashed" "$out/$1.log" && result=failure
  { grep -E '^stat::' "$out/$1.log" || true; echo "seconds: $seconds"; echo "log: $out/$1.log"; echo "result: $result"; } >"$reports/$1.stats"
  if [ $result != ok ]; then
    echo "fuzzing $1 found a failure: see $out/$1.log and the $1-crash-* artifact" >&2
    exit 1
  fi
  echo "fuzz $1: $(grep -oE 'stat::number_of_executed_units: [0-9]+' "$out/$1.log" | awk '{print $2}') inputs in ${seconds}s, no failure"
}
run http-parser "$out/corpus" 4096

swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name WebSocketFuzz \
  Sources/HTTP/WebSocketFrame.swift fuzz/WebSocketFuzz.swift \
  -o "$out/websocket" 2>"$out/build-ws.log" || { cat "$out/build-ws.log" >&2; exit 1; }
mkdir -p "$out/ws-corpus"
# Seeds: a masked text frame, a fragmented message around a ping, a close with a code.
printf '\x81\x82\x01\x02\x03\x04\x69\x6b' >"$out/ws-corpus/text"
printf '\x01\x81\x00\x00\x00\x00a\x89\x80\x00\x00\x00\x00\x80\x81\x00\x00\x00\x00b' >"$out/ws-corpus/fragments"
printf '\x88\x82\x00\x00\x00\x00\x03\xe8' >"$out/ws-corpus/close"
run websocket "$out/ws-corpus" 1024

# The request path: HTTP parse → credentials → PostgREST's parse, ownership, plan, SQL and
# rendering; the Auth request parser; Realtime's frames, bindings and filters (Sources/RequestFuzz).
# SwiftPM builds every module it needs with ASan and libFuzzer's coverage into its own scratch
# folder; the target has its own main, so it links libFuzzer's driver without libFuzzer's main.
runtime=$(dirname "$(find "$(dirname "$(dirname "$(command -v swiftc)")")/lib/clang" -name 'libclang_rt.fuzzer_no_main-x86_64.a' | head -1)")
swift build -c release --product RequestFuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp -Xswiftc -DFUZZING \
  -Xlinker "$runtime/libclang_rt.fuzzer_no_main-x86_64.a" -Xlinker -lstdc++ >"$out/build-request.log" 2>&1 \
  || { grep -v "Cannot export" "$out/build-request.log" >&2; exit 1; }
cp .build-fuzz/release/RequestFuzz "$out/request"
mkdir -p "$out/request-corpus"
# Seeds: what supabase-py and supabase-swift send (fuzz/seeds/request), and what fuzzing found.
run request "$out/request-corpus" 4096 fuzz/seeds/request
