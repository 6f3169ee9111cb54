#!/usr/bin/env python3
"""Checks that our header gives every shared struct field, vtable entry and function
pointer typedef the same C type as IREE v3.3.0's headers (the layout test checks sizes and
offsets; this checks what the offsets hold: each entry's return and parameter types).

Both layout_ours.c and layout_iree.c are parsed with clang's JSON AST dump; the types
are compared as clang spells them, after dropping `restrict` (IREE marks some pointer
parameters IREE_RESTRICT, which does not change the calling convention) and, in
parameter lists, top-level `const` on by-value parameters (not part of a function's
type in C). Fields whose type IREE leaves anonymous (unions, bit-fields) are checked by
the layout test's byte images instead.

usage: check_signatures.py CLANG IREE_INCLUDE_DIR OUR_INCLUDE_DIR C_TESTS_DIR
"""
import json
import re
import subprocess
import sys


def ast_decls(clang, source, include_dirs):
    command = [clang, "-fsyntax-only", "-w", "-std=c11", "-Xclang", "-ast-dump=json",
               "-Xclang", "-ast-dump-filter=iree_"]
    command += [f"-I{d}" for d in include_dirs] + [source]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"clang failed on {source}:\n{result.stderr}")
    text = result.stdout
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return
        decl, position = decoder.raw_decode(text, position)
        yield decl


def split_top_level(params):
    parts, depth, current = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def normalize(type_name):
    # cbindgen spells struct types `struct X`; IREE uses the typedef X of the same name.
    type_name = re.sub(r"\b(struct|union|enum) ", "", type_name)
    type_name = re.sub(r"\brestrict\b", "", type_name)
    match = re.fullmatch(r"(.*?)\(\*\)\((.*)\)", type_name.strip())
    if match:
        params = []
        for param in split_top_level(match.group(2)):
            param = param.strip()
            # A by-value parameter's own const is not part of the function type.
            if param.startswith("const ") and "*" not in param:
                param = param[len("const "):]
            params.append(param)
        type_name = f"{match.group(1)}(*)({', '.join(params)})"
    type_name = re.sub(r"\s+", " ", type_name).replace("* ", "*").strip()
    return re.sub(r"\s+([,)])", r"\1", type_name)


# Intended differences, each with its reason.
KNOWN_DIFFERENCES = {
    # IREE's atomic int32; plain int32_t in our header (the Rust side uses AtomicI32,
    # which has the same size, alignment and representation).
    ("iree_hal_resource_t", "ref_count"): ("int32_t", "iree_atomic_ref_count_t"),
}


def collect(clang, source, include_dirs, wanted):
    fields, typedefs = {}, {}
    for decl in ast_decls(clang, source, include_dirs):
        name = decl.get("name")
        if name not in wanted:
            continue
        if decl["kind"] == "RecordDecl" and decl.get("completeDefinition"):
            fields[name] = {
                field["name"]: field["type"]["qualType"]
                for field in decl.get("inner", [])
                if field["kind"] == "FieldDecl" and field.get("name")
            }
        elif decl["kind"] == "TypedefDecl" and "(*)" in decl["type"]["qualType"]:
            typedefs[name] = decl["type"]["qualType"]
    return fields, typedefs


def main():
    clang, iree_include, our_include, c_tests = sys.argv[1:5]
    with open(f"{c_tests}/layout_fields.h") as table:
        wanted = set(re.findall(r"^STRUCT\((\w+)\)", table.read(), re.M))
    ours_fields, ours_typedefs = collect(clang, f"{c_tests}/layout_ours.c",
                                         [our_include, c_tests], wanted)
    iree_fields, iree_typedefs = collect(clang, f"{c_tests}/layout_iree.c",
                                         [iree_include, c_tests], wanted)
    compared, failures = 0, 0
    for struct, iree_struct_fields in sorted(iree_fields.items()):
        for field, iree_type in iree_struct_fields.items():
            if "anonymous" in iree_type or "unnamed" in iree_type:
                continue
            our_type = ours_fields.get(struct, {}).get(field)
            if our_type is None:
                continue  # bit-fields and union overlays: see layout_images.h
            compared += 1
            if KNOWN_DIFFERENCES.get((struct, field)) == (our_type, iree_type):
                continue
            if normalize(our_type) != normalize(iree_type):
                failures += 1
                print(f"{struct}.{field}:\n  ours: {our_type}\n  IREE: {iree_type}")
    for name, iree_type in sorted(iree_typedefs.items()):
        compared += 1
        our_type = ours_typedefs.get(name)
        if our_type is None or normalize(our_type) != normalize(iree_type):
            failures += 1
            print(f"typedef {name}:\n  ours: {our_type}\n  IREE: {iree_type}")
    missing = sorted(set(iree_fields) - set(ours_fields))
    for struct in missing:
        failures += 1
        print(f"{struct}: no definition in our header")
    print(f"check_signatures: {compared} field and typedef types compared, "
          f"{failures} mismatches")
    return 0 if failures == 0 and compared > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
