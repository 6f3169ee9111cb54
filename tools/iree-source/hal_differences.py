#!/usr/bin/env python3
"""What differs, for this driver, between the HAL of IREE v3.3.0 and of IREE 3.13.

Reads both source trees (tools/iree-source/locate.sh and locate.sh 3.13) and writes, for
every vtable, every struct and every exported function this library mirrors or implements
(the names are read from src/abi/ and src/exports/), what 3.13 added, removed or changed.
This is the work list of the 3.13 ABI layer, taken from IREE's headers instead of from
memory.

usage: hal_differences.py [--check] [--out FILE]
  --out FILE   write the report there (default: stdout)
  --check      fail (exit 1) when FILE differs from what the sources give
"""
import argparse
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADERS = [
    "runtime/src/iree/hal",
    "runtime/src/iree/hal/drivers/hip",
    "runtime/src/iree/base",
    "runtime/src/iree/io",
]


def locate(version):
    script = os.path.join(REPO, "tools/iree-source/locate.sh")
    args = [script] if version == "3.3.0" else [script, version]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def header_text(root):
    """Every header of the directories above (not recursive), comments removed."""
    text = []
    for directory in HEADERS:
        path = os.path.join(root, directory)
        for name in sorted(os.listdir(path)):
            if name.endswith(".h"):
                with open(os.path.join(path, name), encoding="utf-8", errors="replace") as f:
                    text.append(f.read())
    source = "\n".join(text)
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def squash(text):
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"\s*([(),*;])\s*", r"\1", text).replace("IREE_API_PTR", "").replace("(*", "(*")


def struct_bodies(source):
    """name -> body of every struct or union definition: `struct name {...}`, and
    `typedef struct|union [tag] {...} name;` under its typedef name too."""
    bodies = {}
    for match in re.finditer(r"(typedef\s+)?\b(?:struct|union)\s+(\w+)?\s*\{", source):
        start, depth, i = match.end(), 1, match.end()
        while depth and i < len(source):
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            i += 1
        body = source[start : i - 1]
        if match.group(2):
            bodies.setdefault(match.group(2), body)
        if match.group(1):
            alias = re.match(r"\s*(\w+)\s*;", source[i:])
            if alias:
                bodies.setdefault(alias.group(1), body)
    return bodies


def split_top_level(body):
    """The `;`-separated declarations of a body, nested braces kept whole."""
    parts, depth, current = [], 0, []
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == ";" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def members(body):
    """The declarations of a struct body, one string each (function pointers by name)."""
    result = []
    for declaration in split_top_level(body):
        declaration = squash(declaration)
        if not declaration or declaration.startswith("#"):
            continue
        pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", declaration)
        name = pointer.group(1) if pointer else re.findall(r"(\w+)\s*(?:\[[^\]]*\])*\s*(?::\s*\d+)?$", declaration)
        name = name if isinstance(name, str) else (name[-1] if name else declaration)
        result.append((name, declaration))
    return result


def prototypes(source, names):
    found = {}
    for name in names:
        match = re.search(r"([\w\s\*]+?)\b" + name + r"\s*\(([^;{]*?)\)\s*;", source)
        if match:
            found[name] = squash(match.group(1).replace("IREE_API_EXPORT", "") + " " + name + "(" + match.group(2) + ")")
    return found


def mirrored_names():
    structs, functions = set(), set()
    for directory, pattern, bucket in [
        ("src/abi", r"pub (?:struct|union) (iree_[a-z0-9_]+_t)\b", structs),
        ("src/exports", r"fn (iree_[a-z0-9_]+)\(", functions),
    ]:
        for root, _, files in os.walk(os.path.join(REPO, directory)):
            for name in files:
                if name.endswith(".rs"):
                    with open(os.path.join(root, name), encoding="utf-8") as f:
                        bucket.update(re.findall(pattern, f.read()))
    return sorted(structs), sorted(functions)


def compare_members(old, new):
    """Lines describing how `new` differs from `old` (order kept: position matters)."""
    lines = []
    old_names = [n for n, _ in old]
    new_names = [n for n, _ in new]
    old_map, new_map = dict(old), dict(new)
    for name in old_names:
        if name not in new_map:
            lines.append(f"- removed `{name}`: `{old_map[name]}`")
        elif old_map[name] != new_map[name]:
            lines.append(f"- changed `{name}`: `{old_map[name]}` → `{new_map[name]}`")
    for index, name in enumerate(new_names):
        if name not in old_map:
            lines.append(f"- added `{name}` (at {index}): `{new_map[name]}`")
    common = [n for n in new_names if n in old_map]
    if [n for n in old_names if n in new_map] != common:
        lines.append("- order of the common members changed: " + ", ".join(f"`{n}`" for n in common))
    return lines


def report(old_root, new_root):
    old_source, new_source = header_text(old_root), header_text(new_root)
    old_structs, new_structs = struct_bodies(old_source), struct_bodies(new_source)
    structs, functions = mirrored_names()
    out = [
        "# IREE v3.3.0 → IREE 3.13: the HAL this driver mirrors",
        "",
        "Generated by `tools/iree-source/hal_differences.py --out iree-harness/iree-3.13/HAL_DIFFERENCES.md`",
        "from eerie-sys 0.2.5 (v3.3.0) and eerie-sys 0.5.0 (3.13.0.dev) for every struct, union",
        "and vtable in `src/abi/` and every function in `src/exports/`; CTest `iree_313_hal_differences`",
        "checks it is current. Comments are stripped; C's spacing is normalised.",
        "",
    ]
    unchanged, missing = [], []
    out.append("## Structs and vtables")
    out.append("")
    for name in structs:
        if name not in old_structs:
            missing.append(name)
            continue
        if name not in new_structs:
            out += [f"### `{name}`", "", "- not found in 3.13's headers", ""]
            continue
        old, new = members(old_structs[name]), members(new_structs[name])
        lines = compare_members(old, new)
        if lines:
            entries = f" ({len(old)} → {len(new)} members)"
            out += [f"### `{name}`{entries}", ""] + lines + [""]
        else:
            unchanged.append(name)
    out += ["## Exported functions", ""]
    old_protos, new_protos = prototypes(old_source, functions), prototypes(new_source, functions)
    for name in functions:
        old, new = old_protos.get(name), new_protos.get(name)
        if old is None and new is None:
            missing.append(name)
        elif old != new:
            out += [f"- `{name}`: `{old}` → `{new}`"]
        else:
            unchanged.append(name)
    out += ["", "## Unchanged", "", ", ".join(f"`{n}`" for n in unchanged), ""]
    out += ["## Not declared in these headers (ours, or opaque in IREE)", "", ", ".join(f"`{n}`" for n in sorted(missing)), ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = report(locate("3.3.0"), locate("3.13"))
    if args.check:
        with open(args.out, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{args.out} is stale: run tools/iree-source/hal_differences.py --out {args.out}", file=sys.stderr)
                return 1
        return 0
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
