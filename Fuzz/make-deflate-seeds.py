#!/usr/bin/env python3
"""Writes the deflate fuzzer's seeds into Fuzz/corpus-deflate (the committed
files are its output; run it again after changing how DeflateFuzzer.c reads
an input). Each seed's first byte picks the mode as the harness reads it:
bit 0 a row recipe (else raw bytes), bits 1-2 the bands less one, bit 3 a
recipe of badge-sized rows. The seeds reach what random inputs rarely do: a
block ended by its 256 KB of input (BLOCK_INPUT in badge_deflate.c) rather
than by its 32 K symbols, in raw bytes and in badge-sized rows, after stored
blocks of noise, at the very end of the stream, and rows 4097 bytes apart
as a 1024 px badge has them.
    Fuzz/make-deflate-seeds.py"""
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-deflate")
MAX_LEN = 300000  # scripts/fuzz.sh runs the target with -max_len=300000


def header(recipe, bands, large=False):
    return bytes([(1 if recipe else 0) | (bands - 1) << 1 | (8 if large else 0)])


def rows(width, count):
    """A large recipe's size header: pixels across and rows, as structured() reads them."""
    w, r = width - 1, count - 1
    return bytes([w & 0xFF, w >> 8, r & 0xFF, r >> 8])


# Ops, as structured() reads them: op % 5 is the row's filter byte, op / 5 % 4
# how its pixels are made (0 one colour, 1 the row above, 2 noise from the
# input, 3 short runs), from the byte after the op; an op of 20 or more
# consumes that byte, so the next op follows it.
def op(filter_type, kind, with_argument=False):
    return kind * 5 + filter_type + (20 if with_argument else 0)


ONE_COLOUR, ROW_ABOVE, NOISE, SHORT_RUNS = range(4)


def seeds():
    noise = random.Random(34)
    found = {}
    # Raw bytes, one band: 290 KB of zeros is one block until 256 KB of input ends it.
    found["raw-zeros-one-band"] = header(False, 1) + bytes(290_000)
    # Raw bytes, one band: exactly 256 KB of zeros, so the block that its input
    # ends is also the stream's last.
    found["raw-zeros-256k"] = header(False, 1) + bytes(1 << 18)
    # Raw bytes: 33 KB of noise (a block ended by its 32 K symbols, stored), then
    # runs of a pixel, 256 KB of them in the next block.
    body = bytes(noise.randrange(256) for _ in range(33_000))
    body += b"".join(bytes([i % 251, 7, 7, 255]) * 64 for i in range(1100))
    found["raw-noise-then-runs"] = header(False, 1) + body[:MAX_LEN - 1]
    # Badge-sized rows (1024 px, 4097 bytes a row): a row of short runs, then
    # rows that repeat it with each filter type, 127 rows (520 KB): in one band
    # a block ends at 256 KB of input; in 2 to 4 bands each band starts with
    # the 32 KB before it as history, as PNGEncoder's bands do.
    recipe = rows(1024, 127) + bytes([op(0, SHORT_RUNS, True), 3])
    recipe += bytes(op(k % 5, ROW_ABOVE) for k in range(126))
    for bands in (1, 2, 3, 4):
        found[f"badge-rows-{bands}-bands"] = header(True, bands, large=True) + recipe
    # Badge-sized rows with noise: every eighth row is noise from the input
    # (4096 bytes each), the others repeat the row above or are one colour: a
    # block ended by its 32 K symbols in the recipe mode.
    recipe = rows(1024, 120)
    for k in range(120):
        if k % 8 == 0:
            recipe += bytes([op(k % 5, NOISE)]) + bytes(noise.randrange(256) for _ in range(4096))
        elif k % 8 == 5:
            recipe += bytes([op(1, ONE_COLOUR, True), 0x40 + k])
        else:
            recipe += bytes([op(k % 5, ROW_ABOVE)])
    found["badge-rows-with-noise"] = header(True, 1, large=True) + recipe
    # A narrow tall picture: 16 px rows, 1024 of them (~66 KB, one block).
    found["narrow-tall-rows"] = header(True, 1, large=True) + rows(16, 1024) + bytes([op(2, SHORT_RUNS, True), 9]) + bytes(
        op(k % 5, ROW_ABOVE if k % 3 else ONE_COLOUR) for k in range(1023))
    # The small recipe mode (up to 64 px, 128 rows), as random inputs reach it.
    found["small-rows"] = header(True, 1) + bytes([63, 127, op(0, SHORT_RUNS, True), 5]) + bytes(
        op(k % 5, ROW_ABOVE) for k in range(127))
    for name, data in found.items():
        assert len(data) <= MAX_LEN, (name, len(data))
    return found


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
