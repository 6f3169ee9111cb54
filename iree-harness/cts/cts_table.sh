#!/usr/bin/env bash
# Runs IREE v3.3.0's HIP conformance suites on the software HIP device with IREE's own C
# driver and with ours, side by side, and prints one table: suite x variant, each cell
# "C / Rust" (pass, FAIL, or "-" where IREE excludes the suite for its own driver).
# Needs a configured build (./test.sh or ./run.sh made one in build/).
#
# usage: iree-harness/cts/cts_table.sh      (from anywhere; BUILD_DIR overrides <repo>/build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build}
cmake --build "$build" >/dev/null 2>&1
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
ctest --test-dir "$build" -L iree-c-driver-cts -j2 --output-junit "$results/c.xml" >/dev/null || true
ctest --test-dir "$build" -L rust-driver-cts -j2 --output-junit "$results/rust.xml" >/dev/null || true
python3 - "$results/c.xml" "$results/rust.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
def load(path):
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name")
        if "/hip_" not in name or name.endswith("probe"):
            continue
        failed = case.find("failure") is not None or case.get("status") not in (None, "run")
        out[name.split("/", 1)[1]] = "FAIL" if failed else "pass"
    return out
c, rust = load(sys.argv[1]), load(sys.argv[2])
variants = ["stream", "graph", "multi_queue_stream", "multi_queue_graph",
            "multi_queue_stream_queue_1", "multi_queue_graph_queue_1"]
def split(name):
    # The longest variant that prefixes the name (queue_1 variants extend the others).
    variant = max((v for v in variants if name.startswith(f"hip_{v}_")), key=len)
    return variant, name[len(f"hip_{variant}_"):-len("_test") if name.endswith("_test") else None]
cells = {}
for driver, results in (("c", c), ("rust", rust)):
    for name, outcome in results.items():
        variant, suite = split(name)
        cells[(suite, variant, driver)] = outcome
suites = sorted({suite for suite, _, _ in cells})
short = ["stream", "graph", "mq_stream", "mq_graph", "mq_stream_q1", "mq_graph_q1"]
print(f"{'suite':34}" + "".join(f"{s:>14}" for s in short))
counts = {"c": 0, "rust": 0, "c_total": 0, "rust_total": 0}
for suite in suites:
    row = f"{suite:34}"
    for v in variants:
        a, b = cells.get((suite, v, "c"), "-"), cells.get((suite, v, "rust"), "-")
        counts["c"] += a == "pass"; counts["c_total"] += a != "-"
        counts["rust"] += b == "pass"; counts["rust_total"] += b != "-"
        row += f"{a + ' / ' + b:>14}"
    print(row)
print(f"\nC driver: {counts['c']}/{counts['c_total']} binaries pass; "
      f"Rust driver: {counts['rust']}/{counts['rust_total']} binaries pass "
      f"(cells: C / Rust; '-' = not built: IREE excludes the suite for its C driver)")
PY
