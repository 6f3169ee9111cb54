#!/usr/bin/env python3
"""Prints IREE 3.13's HIP CTS results of a ctest run as one table: a row per suite, a
column per mode (stream, graph), each cell "ctest result: gtest passed/skipped/failed".

usage: cts_table.py [BUILD_DIR] [SET]
  BUILD_DIR  a build of iree-harness/iree-3.13/cts after ctest ran in it
             (default <repo>/build/iree-313-cts); reads Testing/Temporary/LastTest.log
  SET        the set's test name prefix (default iree_c_313)

A test that timed out shows the gtest test it was in ("hung in <test>"); "skipped"
counts the tests IREE's backend file marks unsupported or expected to fail for HIP.
"""
import pathlib
import re
import sys

repo = pathlib.Path(__file__).resolve().parents[3]
build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else repo / "build/iree-313-cts"
set_name = sys.argv[2] if len(sys.argv) > 2 else "iree_c_313"
log = (build / "Testing/Temporary/LastTest.log").read_text(errors="replace")

results = {}  # (suite, mode) -> cell
for block in re.split(r"\n-{50,}\n\n", log):
    name = re.search(r"^\d+/\d+ Test: (\S+)", block, re.M)
    if not name or not name.group(1).startswith(set_name + "/hip_"):
        continue
    test = name.group(1)[len(set_name) + len("/hip_"):]
    if test == "driver_probe":
        results[("(driver probe)", "-")] = "passed" if "Test Passed." in block else "FAILED"
        continue
    mode, suite = test.split("_", 1)
    count = lambda label: int(m.group(1)) if (m := re.search(r"\[  " + label + r" *\] (\d+) test", block)) else 0
    passed, skipped, failed = count("PASSED"), count("SKIPPED"), count("FAILED")
    if "Test Passed." in block:
        verdict = "pass"
    elif re.search(r"time elapsed: \d\d:0[5-9]|Timeout", block) and not re.search(r"\[==========\] \d+ tests? from", block):
        running = re.findall(r"\[ RUN      \] (\S+)", block)
        verdict = "TIMEOUT" + (f" (hung in {running[-1]})" if running else "")
    else:
        verdict = "FAIL"
    results[(suite, mode)] = f"{verdict}: {passed}/{skipped}/{failed}"

suites = sorted({suite for suite, mode in results if mode != "-"})
width = max([len(s) for s in suites] + [5])
print(f"IREE 3.13 HIP CTS, set {set_name} (cells: ctest verdict: gtest passed/skipped/failed)")
print(f"| {'suite':<{width}} | stream | graph |")
print(f"|{'-' * (width + 2)}|---|---|")
for suite in suites:
    print(f"| {suite:<{width}} | {results.get((suite, 'stream'), '-')} | {results.get((suite, 'graph'), '-')} |")
if ("(driver probe)", "-") in results:
    print(f"driver probe: {results[('(driver probe)', '-')]}")
cells = [v for (s, m), v in results.items() if m != "-"]
ok = sum(v.startswith("pass") for v in cells)
print(f"{ok} passed, {len(cells) - ok} failed")
