#!/usr/bin/env python3
"""Instruction counts of one thread from a callgrind profile, charged to the shared objects
that asked for them.

Each object's "own" cost is what its functions execute themselves plus everything they call
in a leaf library (the C library, the C++ runtime, the dynamic loader, the HIP library): a
leaf library never calls back into the program, so the instructions `memset` or `malloc`
executed for the VM are the VM's, and those the HIP library executed for the driver are the
driver's. Calls between non-leaf objects are not followed (their callee's own cost is
counted where it lies), so nothing is counted twice.

usage: callgrind_costs.py CALLGRIND_OUT [CALLGRIND_OUT]   (prints each object's own cost;
                                                          given two, the second minus the first)
       callgrind_costs.py --self-test
"""

from __future__ import annotations

import collections
import os
import re
import sys

# Libraries that only ever return to their caller (a HIP host function never runs on the
# calling thread: HIP runs it on a stream's thread).
LEAF_OBJECTS = re.compile(r"^(libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|linux-vdso|libamdhip64\.so|"
                          r"libpthread\.so|libdl\.so|\?\?\?$)")

_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def is_leaf(obj: str) -> bool:
    return bool(LEAF_OBJECTS.match(os.path.basename(obj)))


class _Names:
    """callgrind's name compression: `(id) name` defines, `(id)` refers."""

    def __init__(self):
        self.by_id = {}

    def resolve(self, text: str) -> str:
        match = _NAMED.match(text)
        if not match:
            return text
        ident, name = match.groups()
        if name is not None:
            self.by_id[ident] = name
            return name
        return self.by_id.get(ident, f"({ident})")


def own_costs(lines) -> collections.Counter:
    """Own cost (first event, normally Ir) per object, for the lines of one callgrind file."""
    objects = _Names()  # ob= and cob= share one table
    functions = _Names()  # fn= and cfn= share one table
    exclusive = collections.Counter()  # (object, function) -> cost of its own lines
    calls = []  # (caller object, caller function, callee object, callee function, inclusive cost)
    current_object, current_function = "???", "???"
    callee_object = callee_function = None
    in_call = False
    for raw in lines:
        line = raw.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        if key == "ob":
            current_object = objects.resolve(value)
        elif key == "fn":
            current_function = functions.resolve(value)
        elif key == "cob":
            callee_object = objects.resolve(value)
        elif key == "cfn":
            callee_function = functions.resolve(value)
        elif key == "calls":
            in_call = True
        elif "=" in line.split(" ", 1)[0] or line[0] not in "+-*0123456789":
            continue  # fl=, fi=, fe=, cfi=, cfl=, headers (events:, totals:, ...)
        else:
            fields = line.split()
            cost = int(fields[1]) if len(fields) > 1 else 0
            if in_call:
                # The callee object defaults to the caller's.
                target_object = callee_object if callee_object is not None else current_object
                calls.append((current_object, current_function, target_object, callee_function, cost))
                in_call = False
                callee_object = callee_function = None
            else:
                exclusive[(current_object, current_function)] += cost
    # Leaf functions that call back into the program (__libc_start_main, start_thread, a
    # dlopen running constructors...), directly or through other leaf functions: a call into
    # one is not charged to its caller, the program code it reaches counts on its own.
    trampolines = set()
    changed = True
    while changed:
        changed = False
        for caller_object, caller_function, target_object, target_function, _ in calls:
            caller = (caller_object, caller_function)
            if not is_leaf(caller_object) or caller in trampolines:
                continue
            if not is_leaf(target_object) or (target_object, target_function) in trampolines:
                trampolines.add(caller)
                changed = True
    costs = collections.Counter()
    for (obj, _), cost in exclusive.items():
        if not is_leaf(obj):
            costs[obj] += cost
    for caller_object, _, target_object, target_function, cost in calls:
        if not is_leaf(caller_object) and is_leaf(target_object) and (target_object, target_function) not in trampolines:
            costs[caller_object] += cost
    return costs


def read(path: str) -> collections.Counter:
    with open(path, errors="replace") as f:
        return own_costs(f)


def _self_test() -> int:
    # main (the program) calls the VM library, which calls memset in libc twice (100 + 40
    # instructions inclusive); the VM itself executes 30; the driver 20, plus 70 in the HIP
    # library, which calls libc (5: inside the 70, not counted again).
    sample = """\
version: 1
events: Ir
ob=(1) /bin/program
fn=(1) main
1 10
cob=(2) /lib/libiree_vm_impl.so
cfn=(2) invoke
calls=1 5
2 1000
ob=(2)
fn=(2)
5 30
cob=(3) /lib/x86_64-linux-gnu/libc.so.6
cfn=(3) memset
calls=2 1
+1 140
cob=(4) /lib/libiree_hal_hip_rs.so
cfn=(4) queue_execute
calls=1 7
* 90
ob=(4)
fn=(4)
7 20
cob=(5) /lib/libamdhip64.so
cfn=(5) hipLaunchKernel
calls=1 1
8 70
ob=(5)
fn=(5)
1 65
cob=(3)
cfn=(3)
calls=1 1
2 5
ob=(3)
fn=(3)
1 145
"""
    costs = own_costs(sample.splitlines())
    expected = {"/bin/program": 10, "/lib/libiree_vm_impl.so": 170, "/lib/libiree_hal_hip_rs.so": 90}
    problems = [f"{obj}: {costs.get(obj, 0)} (expected {want})" for obj, want in expected.items() if costs.get(obj, 0) != want]
    leaked = {obj: cost for obj, cost in costs.items() if obj not in expected}
    if leaked:
        problems.append(f"leaf libraries counted on their own: {leaked}")
    for problem in problems:
        print("callgrind_costs self-test FAILED:", problem, file=sys.stderr)
    if not problems:
        print("callgrind_costs self-test passed")
    return 1 if problems else 0


def main(argv) -> int:
    if argv == ["--self-test"]:
        return _self_test()
    if len(argv) not in (1, 2):
        sys.exit(__doc__)
    costs = read(argv[-1])
    if len(argv) == 2:
        costs.subtract(read(argv[0]))
    for obj, cost in sorted(costs.items(), key=lambda item: -item[1]):
        if cost:
            print(f"{cost:>14,}  {obj}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
