#!/usr/bin/env python3
"""Checks that README.md and docs/ say what the repository does (CTest `docs_consistency`):

1. the README's flags table lists exactly the driver's flags (src/registration/iree_link_shim.c),
   each with its environment variable;
2. the README's command for building IREE's tools with our driver passes exactly the CMake
   options iree-harness/external-build/test_external_build.sh passes (the one the tests run);
3. every relative Markdown link in README.md and docs/*.md resolves;
4. every repository path quoted in `backticks` there (a path with a slash, starting at a
   top-level folder of the repository) exists.

Prints each problem; exit status 0 when there is none.
"""

import glob
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(path):
    with open(os.path.join(REPO, path)) as f:
        return f.read()


def main():
    problems = []
    readme = read("README.md")

    # 1. Flags.
    shim = read("src/registration/iree_link_shim.c")
    names = re.search(r"hip_rs_flag_names\[HIP_RS_FLAG_COUNT\] = \{(.*?)\};", shim, re.S).group(1)
    flags = set(re.findall(r'"(hip_[a-z_]+)"', names))
    table = re.search(r"\| flag \| environment \| meaning \|\n\|---\|---\|---\|\n((?:\|.*\n)+)", readme)
    if not table:
        problems.append("README.md: no flags table (| flag | environment | meaning |)")
    else:
        rows = table.group(1).splitlines()
        listed = {re.search(r"`--(hip_[a-z_]+)", row).group(1): row for row in rows if re.search(r"`--(hip_[a-z_]+)", row)}
        for flag in sorted(flags - set(listed)):
            problems.append(f"README.md: the flags table lacks --{flag}")
        for flag in sorted(set(listed) - flags):
            problems.append(f"README.md: the flags table lists --{flag}, which the driver does not register")
        for flag, row in listed.items():
            variable = "IREE_" + flag.upper()
            if variable not in row:
                problems.append(f"README.md: --{flag}'s row does not name {variable}")

    # 2. The external build's CMake options.
    script = read("iree-harness/external-build/test_external_build.sh")
    tested = set(re.findall(r"-D(IREE_[A-Z_]+|CMAKE_BUILD_TYPE)=", script))
    block = re.search(r"```sh\n(IREE=.*?)```", readme, re.S)
    if not block:
        problems.append("README.md: no command building IREE's tools with our driver (a block starting IREE=...)")
    else:
        shown = set(re.findall(r"-D(IREE_[A-Z_]+|CMAKE_BUILD_TYPE)=", block.group(1)))
        for option in sorted(tested - shown):
            problems.append(f"README.md: the IREE build command lacks -D{option}, which test_external_build.sh passes")
        for option in sorted(shown - tested):
            problems.append(f"README.md: the IREE build command passes -D{option}, which test_external_build.sh does not")

    # 3 and 4. Links and paths.
    top_level = {entry for entry in os.listdir(REPO) if not entry.startswith(".")}
    for path in ["README.md"] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))):
        relative = os.path.relpath(path, REPO) if os.path.isabs(path) else path
        text = read(relative)
        folder = os.path.dirname(os.path.join(REPO, relative))
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if target.startswith(("http://", "https://")):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(folder, target))):
                problems.append(f"{relative}: the link {target} leads nowhere")
        for quoted in re.findall(r"`([A-Za-z0-9_.\-]+/[A-Za-z0-9_./\-]*)`", text):
            first = quoted.split("/")[0]
            if first not in top_level or first in ("build", "target") or any(c in quoted for c in "*<>$"):
                continue
            if not os.path.exists(os.path.join(REPO, quoted.rstrip("/"))):
                problems.append(f"{relative}: `{quoted}` does not exist")

    for problem in problems:
        print(problem)
    print(f"check_docs.py: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
