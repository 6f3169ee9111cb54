#!/usr/bin/env bash
# The sanitizer canary: runs <program> <case> (canary/main.c linked with canary/, built with
# our library's flags in build 2 of the sanitizer build) and passes when it fails with the
# sanitizer report that case must give, i.e. when clang's runtime really reports an error
# that nightly rustc's ASan instrumentation finds in Rust code. Prints one line, not the
# report (tools/sanitizers/run.sh fails on any report in test output).
# usage: canary.sh <program> overflow|leak
set -euo pipefail
program=$1 case=$2
case $case in
  overflow) expected=("ERROR: AddressSanitizer: heap-buffer-overflow" "READ of size 1"
                      "in sanitizer_canary_overflow" "canary/src/lib.rs") ;;
  leak) expected=("ERROR: LeakSanitizer: detected memory leaks" "Direct leak of 100 byte(s)"
                  "leak_100_bytes") ;;
  *) echo "usage: $0 <program> overflow|leak" >&2; exit 2 ;;
esac
rc=0
output=$("$program" "$case" 2>&1) || rc=$?
if [[ $rc == 0 ]]; then
  echo "canary $case: the program exited 0; no sanitizer stopped it" >&2
  exit 1
fi
for text in "${expected[@]}"; do
  if [[ $output != *"$text"* ]]; then
    echo "canary $case: exit status $rc, but the report lacks '$text'; the output was:" >&2
    echo "$output" >&2
    exit 1
  fi
done
echo "canary $case: reported as expected (exit status $rc, ${#expected[@]} checks)"
