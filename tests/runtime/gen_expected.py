#!/usr/bin/python3
"""Regenerates tests/runtime/expected/*.txt from PyTorch (Debian's python3-torch).

Run with /usr/bin/python3 (the Debian interpreter that has torch):
    /usr/bin/python3 tests/runtime/gen_expected.py
The output is committed; the tests themselves never need PyTorch.
"""
import importlib
import pathlib
import sys

import torch

here = pathlib.Path(__file__).parent
sys.path.insert(0, str(here))
import torch_cases  # noqa: E402

only = set(sys.argv[1:])  # module names; all when empty
for mod_path in sorted((here / "cases").glob("[!_]*.py")):
    if only and mod_path.stem not in only:
        continue
    torch.manual_seed(0)
    torch_cases.CASES.clear()
    importlib.import_module(f"cases.{mod_path.stem}")
    torch_cases.write(here / "expected" / f"{mod_path.stem}.txt", torch_cases.CASES)
    print(f"{mod_path.stem}: {len(torch_cases.CASES)} cases")
