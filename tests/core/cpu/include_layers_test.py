#!/usr/bin/env python3
"""The layers of the sources, from their quoted includes: the interfaces (interface/) reach the
core only through core.hpp and problem.hpp (and the bindings cmake/generate_bindings.py writes
for them from the one table, *.inc); the launch layer (src/launch/) includes no kernel or
variant, the shared kernel parts (src/kernels/) no variant, the variants (src/variants/) nothing
of the handle or the dispatch. Usage: include_layers_test.py REPOSITORY_ROOT."""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ("*.hpp", "*.cuh", "*.cpp", "*.cu", "*.h")

# (folder, what its files may not include: a test on the resolved path relative to src/)
RULES = [
    ("src/launch", lambda p: p.startswith(("kernels/", "variants/")) or p in ("context.hpp", "dispatch.hpp")),
    ("src/kernels", lambda p: p.startswith("variants/") or p in ("context.hpp", "dispatch.hpp")),
    ("src/variants", lambda p: p in ("context.hpp", "dispatch.hpp", "core.hpp")),
]
INTERFACE_CORE_HEADERS = {"core.hpp", "problem.hpp"}


def includes(path):
    return INCLUDE.findall(path.read_text(errors="replace"))


def main(root):
    root = pathlib.Path(root)
    problems = []
    for folder, forbidden in RULES:
        for pattern in SOURCES:
            for path in (root / folder).rglob(pattern):
                for name in includes(path):
                    if forbidden(name):
                        problems.append(f"{path.relative_to(root)} includes {name}")
    for pattern in SOURCES:
        for path in (root / "interface").rglob(pattern):
            for name in includes(path):
                local = (path.parent / name).exists() or (root / "interface" / name).exists()
                generated = name.endswith(".inc")
                if not local and not generated and name not in INTERFACE_CORE_HEADERS:
                    problems.append(f"{path.relative_to(root)} includes the core's {name}")
    for line in problems:
        print("FAIL", line)
    print(f"{'FAILED' if problems else 'PASSED'}: include layers, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
