#!/usr/bin/env python3
"""Every type in Tests/ that holds @Test functions carries the
`.threadsOfTheirOwn` trait (Tests/Support/ThreadsOfTheirOwn.swift): its tests
then run on threads of the test process's own, and a busy synchronous test
cannot hold up the others. Prints the types that lack it and exits 1; with
--fix, adds it."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "Tests"
TRAIT = ".threadsOfTheirOwn"
DECLARATION = re.compile(r"^(?:@Suite(?:\(.*\))? )?(?:final |public |private |fileprivate )*(?:struct|class|enum) (\w+)")
EXTENSION = re.compile(r"^extension (\w+)")
TOP_LEVEL = re.compile(r"^(?:@|final |public |private |fileprivate |struct |class |enum |extension |func |let |var |#|import )")


def declarations(lines):
    """(index of the declaration line, name, whether its body has an @Test) of each
    top-level type, and the names of the types whose extensions here have one."""
    found, extended = [], set()
    for i, line in enumerate(lines):
        match = DECLARATION.match(line) or EXTENSION.match(line)
        if not match:
            continue
        j = i + 1
        while j < len(lines) and not TOP_LEVEL.match(lines[j]):
            j += 1
        tests = any(re.match(r"^\s+@Test\b", body) for body in lines[i + 1:j])
        if line.startswith("extension"):
            if tests:
                extended.add(match.group(1))
        else:
            found.append((i, match.group(1), tests))
    return found, extended


def main():
    fix = "--fix" in sys.argv[1:]
    missing = []
    files = {path: path.read_text(encoding="utf-8").split("\n") for path in sorted(ROOT.rglob("*.swift"))}
    scanned = {path: declarations(lines) for path, lines in files.items()}
    extended = set().union(*(names for _, names in scanned.values()))
    for path, lines in files.items():
        changed = False
        for i, name, tests in reversed(scanned[path][0]):
            if not tests and name not in extended:
                continue
            # The attribute is on the line above, or starts the declaration's own line.
            inline = lines[i].startswith("@Suite")
            above = lines[i] if inline else (lines[i - 1] if i > 0 else "")
            if above.startswith("@Suite") and TRAIT in above.split(")")[0]:
                continue
            missing.append(f"{path.relative_to(ROOT.parent)}:{i + 1}: {name}")
            if not fix:
                continue
            if inline:
                if lines[i].startswith("@Suite("):
                    lines[i] = lines[i].replace("@Suite(", f"@Suite({TRAIT}, ", 1).replace(f"{TRAIT}, )", f"{TRAIT})", 1)
                else:
                    lines[i] = lines[i].replace("@Suite", f"@Suite({TRAIT})", 1)
            elif above.startswith("@Suite("):
                lines[i - 1] = above.replace("@Suite(", f"@Suite({TRAIT}, ", 1)
            elif above.startswith("@Suite"):
                lines[i - 1] = above.replace("@Suite", f"@Suite({TRAIT})", 1)
            else:
                lines.insert(i, f"@Suite({TRAIT})")
            changed = True
        if changed:
            path.write_text("\n".join(lines), encoding="utf-8")
    # Tests outside a type would run on the global threads.
    for path in sorted(ROOT.rglob("*.swift")):
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if line.startswith("@Test"):
                missing.append(f"{path.relative_to(ROOT.parent)}:{n}: a @Test outside a suite")
    if missing and not fix:
        print("check-suites: these suites lack the .threadsOfTheirOwn trait "
              "(Tests/Support/ThreadsOfTheirOwn.swift says why):", file=sys.stderr)
        for line in missing:
            print("  " + line, file=sys.stderr)
        print("check-suites: add @Suite(.threadsOfTheirOwn) above each, or run scripts/check-suites.py --fix",
              file=sys.stderr)
        sys.exit(1)
    if fix:
        print(f"check-suites: {len(missing)} suites given the trait")


main()
