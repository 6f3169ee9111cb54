#!/usr/bin/env bash
# The sanitizer canary: runs <program> <case> (canary/main.c linked with canary/, our
# library's build flags) and passes when it fails with a sanitizer report that contains
# every <expected> string, i.e. when the sanitizers of the sanitizer build really report
# an error in address-sanitized Rust code through clang's runtime. Prints one line, not
# the report (tools/sanitizers/run.sh fails on any report in test output).
# usage: canary.sh <program> <case> <expected>...
set -euo pipefail
program=$1 case=$2
shift 2
rc=0
output=$("$program" "$case" 2>&1) || rc=$?
if [[ $rc == 0 ]]; then
  echo "canary $case: the program exited 0; no sanitizer stopped it" >&2
  exit 1
fi
for expected in "$@"; do
  if [[ $output != *"$expected"* ]]; then
    echo "canary $case: exit status $rc, but the output lacks '$expected'; it was:" >&2
    echo "$output" >&2
    exit 1
  fi
done
echo "canary $case: reported as expected (exit status $rc; found: $*)"
