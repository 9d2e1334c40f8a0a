#!/usr/bin/env python3
"""Checks that `make test` ran the tests it should have (used by .ci/run).

    check-test-results.py --floor-file .ci/test-floor --log LOG --results DIR
        fails when badge's own suite (the first Swift Testing run in LOG) ran
        fewer tests than the floor, or when a test target of the package ran
        none (counted from the JUnit XML files in DIR, which `swift test
        --xunit-output` wrote). A test that was skipped did not run: it is
        counted out of both.
    check-test-results.py --count --log LOG
        prints the count of tests that ran (the summary's, less those skipped).
    check-test-results.py --count-ran --log LOG --what WORDS
        says in words how many of the run's tests ran and how many were
        skipped, and names the skipped ones with their reasons.
    check-test-results.py --failures --log LOG
        prints every issue a failing test recorded, with its message's further
        lines: after a long run the failures are otherwise scattered through
        thousands of lines (scripts/test.sh prints this when the suite fails).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = re.compile(r"Test run with (\d+) tests? in \d+ suites? passed")
# Swift Testing's line for a test it did not run: `<symbol> Test name() skipped: "reason"`.
SKIPPED = re.compile(r"^\S+ Test (.+?) skipped(?:: \"(.*)\")?\.?$")


def fail(message):
    sys.exit(f"check-test-results: {message}")


def first_run(log):
    """The first Swift Testing run in LOG (badge's own; the consumer package's follows):
    its summary's count of tests, and the (name, reason) of each test it skipped."""
    skipped = []
    with open(log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            match = SUMMARY.search(line)
            if match:
                return int(match.group(1)), skipped
            match = SKIPPED.match(line)
            if match:
                skipped.append((match.group(1), match.group(2) or "no reason given"))
    fail(f"{log} has no Swift Testing summary (\"Test run with N tests in M suites passed\"): the suite did not run")


def tests_run(log):
    """How many tests of the first run ran: its summary counts the skipped ones too."""
    count, skipped = first_run(log)
    return count - len(skipped)


def floor(path):
    with open(path) as f:
        numbers = [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]
    if len(numbers) != 1 or not numbers[0].isdigit():
        fail(f"{path} must hold one whole number (lines starting with # are comments)")
    return int(numbers[0])


def test_targets():
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return sorted(t["name"] for t in json.loads(dump)["targets"] if t["type"] == "test")


def cases_per_module(results):
    counts = {}
    files = glob.glob(os.path.join(results, "*.xml"))
    if not files:
        fail(f"no JUnit XML in {results}: swift test --xunit-output wrote nothing")
    for path in files:
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            if case.find("skipped") is not None:
                continue
            module = case.get("classname", "").split(".")[0]
            counts[module] = counts.get(module, 0) + 1
    return counts


ISSUE = re.compile(r"✘ Test .* recorded an issue")


def failures(log, most=60):
    """Each issue line and the "↳" lines that continue its message, `most` lines of each at most."""
    printed = 0
    with open(log, errors="replace") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if not ISSUE.search(line):
            continue
        block = [line]
        for following in lines[i + 1:]:
            if not following.lstrip().startswith("↳"):
                break
            block.append(following)
        if len(block) > most:
            block = block[:most] + [f"  ({len(block) - most} more lines of this message are in the log)"]
        print("\n".join(block))
        printed += 1
    if printed == 0:
        print("(no test recorded an issue: the suite ended another way; the log's end says how)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--count", action="store_true")
    parser.add_argument("--count-ran", action="store_true")
    parser.add_argument("--what", default="the suite")
    parser.add_argument("--failures", action="store_true")
    parser.add_argument("--floor-file")
    parser.add_argument("--results")
    args = parser.parse_args()
    if args.failures:
        failures(args.log)
        return
    if args.count_ran:
        count, skipped = first_run(args.log)
        print(f"check-test-results: {args.what}: {count - len(skipped)} tests ran, {len(skipped)} skipped")
        for name, reason in skipped:
            print(f"  skipped {name}: {reason}")
        return
    count = tests_run(args.log)
    if args.count:
        print(count)
        return
    least = floor(args.floor_file)
    if count < least:
        fail(f"Swift Testing ran {count} tests, fewer than the {least} in {args.floor_file}: "
             "find the tests that stopped running (a target dropped, a suite no longer found)")
    counts = cases_per_module(args.results)
    empty = [target for target in test_targets() if counts.get(target, 0) == 0]
    if empty:
        fail(f"these test targets ran no test: {', '.join(empty)}")
    print(f"check-test-results: {count} tests (floor {least}); per target: "
          + ", ".join(f"{name} {counts[name]}" for name in sorted(counts)))


if __name__ == "__main__":
    main()
