#!/usr/bin/env python3
"""Writes Sources/CLazyLibrary/include/badge_sonames.h: the soname of each
library badge opens on first use, read from the library the build links
against (pkg-config's libdir and -l name, then that file's DT_SONAME), so a
soname is never typed by hand. With --check, writes nothing and exits 1 when
the header differs from what it would write (scripts/test.sh runs that)."""
import pathlib
import struct
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "Sources/CLazyLibrary/include/badge_sonames.h"
# The macro, and the pkg-config package the library's Debian -dev package installs.
LIBRARIES = [("BADGE_SONAME_GD", "gdlib"), ("BADGE_SONAME_CURL", "libcurl"),
             ("BADGE_SONAME_LIBCRYPTO", "libcrypto"), ("BADGE_SONAME_RAQM", "raqm"), ("BADGE_SONAME_ICU", "icu-uc")]
DT_SONAME, DT_STRTAB, SHT_DYNAMIC = 14, 5, 6


def pkg_config(*arguments):
    return subprocess.run(["pkg-config", *arguments], check=True, capture_output=True, text=True).stdout.split()


def soname(path):
    """DT_SONAME of a 64-bit little-endian ELF shared library."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"sonames: {path} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != SHT_DYNAMIC:
            continue
        strings = sections[link][4]
        for i in range(0, size, entsize):
            tag, value = struct.unpack_from("<qQ", data, offset + i)
            if tag == DT_SONAME:
                end = data.index(b"\0", strings + value)
                return data[strings + value:end].decode()
    raise SystemExit(f"sonames: {path} names no soname")


def header():
    lines = ["// The soname of each library badge opens on first use (CLazyLibrary), as the",
             "// library this build links against names itself. Written by scripts/sonames.py",
             "// from pkg-config's view of each; scripts/test.sh checks it is current.",
             "#ifndef BADGE_SONAMES_H", "#define BADGE_SONAMES_H", ""]
    for macro, package in LIBRARIES:
        libdir, = pkg_config("--variable=libdir", package)
        name = next(flag[2:] for flag in pkg_config("--libs-only-l", package) if flag.startswith("-l"))
        lines.append(f'#define {macro} "{soname(pathlib.Path(libdir) / f"lib{name}.so")}"  // pkg-config {package}')
    return "\n".join(lines + ["", "#endif", ""])


def main():
    text = header()
    if "--check" in sys.argv[1:]:
        if not HEADER.exists() or HEADER.read_text() != text:
            print(f"sonames: {HEADER.relative_to(ROOT)} is not what this machine's libraries name; "
                  "run scripts/sonames.py and commit the result", file=sys.stderr)
            sys.exit(1)
        return
    HEADER.write_text(text)


main()
