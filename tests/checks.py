"""The driver shared by the tests/*/run.py scripts that run named checks
against build/thn: `--thn PATH`, one `PREFIX NAME: ok|FAILED` line per
check with its problems indented under it, exit status 1 if any failed."""
import argparse
import os
import sys


def run_checks(prefix, checks):
    """checks: [(name, function(thn) -> list of problem strings)]."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    thn = os.path.abspath(ap.parse_args().thn)
    failed = False
    for name, check in checks:
        problems = check(thn)
        print(f"{prefix} {name}: {'ok' if not problems else 'FAILED'}")
        for p in problems:
            print("  " + p.replace("\n", "\n  "))
        failed |= bool(problems)
    sys.exit(1 if failed else 0)
