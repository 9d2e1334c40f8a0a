// A fast deflate encoder for badge's PNGs (RFC 1951).
//
// Why not zlib alone: zlib 1.2.13 (Debian's) at level 2 spends ~6 ns a byte on
// a dithered badge, most of it moving symbols through a 16-bit bit buffer;
// libdeflate is faster but always ends its stream, so bands compressed on
// several cores cannot be joined. This encoder does what level 1-2 needs and
// no more: greedy matching on 4-byte hashes, each remembering its last four
// positions; blocks of up to 32 K symbols each with its own Huffman codes (or
// stored, when that is smaller); a 64-bit bit buffer; and a byte-aligned end
// for every band. On a 1024 px badge's 4 MB of rows, on one core, it writes
// 490 KB in ~11 ms, where zlib level 2 writes 513 KB in ~21 ms
// (docs/PERFORMANCE.md, *Encoding*).

#include "badge_deflate.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "badge_deflate writes its bit buffer as little-endian words"
#endif

enum {
    WINDOW = 32768,
    MIN_MATCH = 4,
    MAX_MATCH = 258,
    // 2^14 buckets of four positions: 256 KB, within a core's L2 cache
    // (2^15: 527 KB instead of 528 KB, no faster).
    HASH_BITS = 14,
    // Positions remembered per hash (at 2^15 buckets): one finds 728 KB for
    // the badge above, two 590 KB, four 527 KB, eight 493 KB at a quarter
    // more time.
    WAYS = 4,
    // Matches this short have every position inside them remembered (which
    // finds the dither's next repeat); longer ones only their last.
    SHORT_MATCH = 8,
    // Matches nearer than this copy slowly when inflated (see the matching).
    NEAR_DISTANCE = 8,
    BLOCK_SYMBOLS = 32768,
    BLOCK_INPUT = 1 << 18,
    LITLEN_CODES = 286,
    DIST_CODES = 30,
    CODELEN_CODES = 19,
};

// A symbol is a literal byte, or this flag | (distance - 1) << 8 | (length - 3).
#define MATCH_FLAG 0x80000000u

// ---------------------------------------------------------------- bits out

typedef struct {
    uint8_t *out;
    size_t pos;
    uint64_t bits;
    unsigned count;
} BitWriter;

// n <= 32; the caller's capacity leaves 8 bytes of slack past any block.
static inline void put_bits(BitWriter *w, uint32_t value, unsigned n) {
    w->bits |= (uint64_t)value << w->count;
    w->count += n;
    if (w->count >= 32) {
        uint32_t word = (uint32_t)w->bits;
        memcpy(w->out + w->pos, &word, 4);
        w->pos += 4;
        w->bits >>= 32;
        w->count -= 32;
    }
}

static void align_to_byte(BitWriter *w) {
    while (w->count > 0) {
        w->out[w->pos++] = (uint8_t)w->bits;
        w->bits >>= 8;
        w->count = w->count > 8 ? w->count - 8 : 0;
    }
    w->bits = 0;
}

// ---------------------------------------------------------------- symbols

static inline uint32_t load32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline unsigned floor_log2(uint32_t v) { return 31u - (unsigned)__builtin_clz(v); }

// Length 3..258 as l = length - 3: its code 257..285, extra bits and their value.
static inline unsigned length_code(unsigned l) {
    if (l < 8) return 257 + l;
    if (l == 255) return 285;
    unsigned n = floor_log2(l);
    return 257 + 4 * (n - 1) + ((l >> (n - 2)) & 3);
}

static inline unsigned length_extra_bits(unsigned l) {
    return (l < 8 || l == 255) ? 0 : floor_log2(l) - 2;
}

// Distance 1..32768 as d = distance - 1: its code 0..29.
static inline unsigned distance_code(unsigned d) {
    if (d < 4) return d;
    unsigned n = floor_log2(d);
    return 2 * n + ((d >> (n - 1)) & 1);
}

// Length and distance codes by table (as zlib's trees.c): the length code of
// every l = length - 3, and the distance code of d = distance - 1 below 256
// directly, above it by d >> 7.
static uint16_t length_code_of[256];
static uint8_t distance_code_of[512];
static pthread_once_t code_tables_once = PTHREAD_ONCE_INIT;

static void make_code_tables(void) {
    for (unsigned l = 0; l < 256; l++) length_code_of[l] = (uint16_t)length_code(l);
    for (unsigned d = 0; d < 256; d++) distance_code_of[d] = (uint8_t)distance_code(d);
    for (unsigned k = 2; k < 256; k++) distance_code_of[256 + k] = (uint8_t)distance_code(k << 7);
}

static inline unsigned distance_code_fast(unsigned d) {
    return d < 256 ? distance_code_of[d] : distance_code_of[256 + (d >> 7)];
}

// ---------------------------------------------------------------- Huffman

typedef struct {
    uint32_t freq;
    uint16_t symbol;
} Leaf;

static int by_frequency(const void *a, const void *b) {
    const Leaf *x = a, *y = b;
    if (x->freq != y->freq) return x->freq < y->freq ? -1 : 1;
    return (int)x->symbol - (int)y->symbol;
}

// Code lengths (at most max_bits) for the n symbols' frequencies; unused
// symbols get 0. At least two symbols must be used.
static void huffman_lengths(const uint32_t *freq, unsigned n, unsigned max_bits, uint8_t *lengths) {
    Leaf leaves[LITLEN_CODES];
    unsigned m = 0;
    for (unsigned s = 0; s < n; s++) {
        lengths[s] = 0;
        if (freq[s]) leaves[m++] = (Leaf){freq[s], (uint16_t)s};
    }
    if (m < 2) {
        if (m == 1) lengths[leaves[0].symbol] = 1;
        return;
    }
    qsort(leaves, m, sizeof(Leaf), by_frequency);

    // Two queues: the sorted leaves, and the internal nodes in the order they
    // are made (their weights never decrease).
    uint32_t weight[2 * LITLEN_CODES];
    uint16_t parent[2 * LITLEN_CODES];
    for (unsigned i = 0; i < m; i++) weight[i] = leaves[i].freq;
    unsigned leaf = 0, node = m, made = m;
    for (unsigned k = 0; k + 1 < m; k++) {
        unsigned pick[2];
        for (int j = 0; j < 2; j++) {
            if (leaf < m && (node >= made || weight[leaf] <= weight[node])) pick[j] = leaf++;
            else pick[j] = node++;
        }
        weight[made] = weight[pick[0]] + weight[pick[1]];
        parent[pick[0]] = parent[pick[1]] = (uint16_t)made;
        made++;
    }
    // Depths from the root down: a parent is always made after its children.
    uint8_t depth[2 * LITLEN_CODES];
    depth[made - 1] = 0;
    unsigned count[33] = {0};
    for (int i = (int)made - 2; i >= 0; i--) depth[i] = depth[parent[i]] + 1;
    for (unsigned i = 0; i < m; i++) count[depth[i] > max_bits ? max_bits : depth[i]]++;

    // Codes longer than max_bits were cut short, which oversubscribes the
    // code: lengthen the longest shorter codes until the Kraft sum is one.
    uint32_t total = 0;
    for (unsigned len = 1; len <= max_bits; len++) total += count[len] << (max_bits - len);
    while (total > (1u << max_bits)) {
        count[max_bits]--;
        for (unsigned len = max_bits - 1; len > 0; len--) {
            if (count[len]) {
                count[len]--;
                count[len + 1] += 2;
                break;
            }
        }
        total--;
    }
    // The rarest symbols get the longest codes.
    unsigned i = 0;
    for (unsigned len = max_bits; len > 0; len--) {
        for (unsigned c = 0; c < count[len]; c++) lengths[leaves[i++].symbol] = (uint8_t)len;
    }
}

// Canonical codes for the lengths, bit-reversed: deflate sends codes from
// their first bit, the bit writer from the lowest.
static void huffman_codes(const uint8_t *lengths, unsigned n, uint16_t *codes) {
    unsigned count[16] = {0}, next[16];
    for (unsigned s = 0; s < n; s++) count[lengths[s]]++;
    count[0] = 0;
    unsigned code = 0;
    for (unsigned len = 1; len < 16; len++) {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    for (unsigned s = 0; s < n; s++) {
        unsigned len = lengths[s];
        if (!len) continue;
        unsigned c = next[len]++, reversed = 0;
        for (unsigned b = 0; b < len; b++) reversed |= ((c >> b) & 1) << (len - 1 - b);
        codes[s] = (uint16_t)reversed;
    }
}

// ---------------------------------------------------------------- blocks

typedef struct {
    uint32_t litlen[LITLEN_CODES];
    uint32_t dist[DIST_CODES];
} Frequencies;

static const uint8_t codelen_order[CODELEN_CODES] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// The lengths of both codes, run-length coded with 16, 17 and 18.
typedef struct {
    uint8_t symbol[LITLEN_CODES + DIST_CODES];
    uint8_t extra[LITLEN_CODES + DIST_CODES];
    unsigned count;
} LengthRuns;

static void run_length_code(const uint8_t *lengths, unsigned n, LengthRuns *runs) {
    runs->count = 0;
    unsigned i = 0;
    while (i < n) {
        uint8_t value = lengths[i];
        unsigned run = 1;
        while (i + run < n && lengths[i + run] == value) run++;
        i += run;
        if (value == 0) {
            while (run >= 11) {
                unsigned r = run > 138 ? 138 : run;
                runs->symbol[runs->count] = 18, runs->extra[runs->count++] = (uint8_t)(r - 11);
                run -= r;
            }
            if (run >= 3) {
                runs->symbol[runs->count] = 17, runs->extra[runs->count++] = (uint8_t)(run - 3);
                run = 0;
            }
        } else {
            runs->symbol[runs->count] = value, runs->extra[runs->count++] = 0;
            run--;
            while (run >= 3) {
                unsigned r = run > 6 ? 6 : run;
                runs->symbol[runs->count] = 16, runs->extra[runs->count++] = (uint8_t)(r - 3);
                run -= r;
            }
        }
        while (run-- > 0) runs->symbol[runs->count] = value, runs->extra[runs->count++] = 0;
    }
}

static const uint8_t codelen_extra_bits[CODELEN_CODES] = {[16] = 2, [17] = 3, [18] = 7};

static void write_stored(BitWriter *w, const uint8_t *bytes, size_t length, int final) {
    do {
        size_t part = length > 65535 ? 65535 : length;
        length -= part;
        put_bits(w, final && length == 0, 1);
        put_bits(w, 0, 2);
        align_to_byte(w);
        uint8_t header[4] = {(uint8_t)part, (uint8_t)(part >> 8), (uint8_t)~part, (uint8_t)(~part >> 8)};
        memcpy(w->out + w->pos, header, 4);
        memcpy(w->out + w->pos + 4, bytes, part);
        w->pos += 4 + part;
        bytes += part;
    } while (length > 0);
}

// Writes one block of `symbols` (which stand for `raw`), with its own codes
// or stored, whichever is smaller.
static void write_block(BitWriter *w, const uint32_t *symbols, unsigned n, Frequencies *f, const uint8_t *raw,
                        size_t raw_length, int final) {
    f->litlen[256] = 1;
    // Both codes need two symbols to be complete; an unused one costs nothing.
    unsigned used = 0;
    for (unsigned s = 0; s < 256 && used < 2; s++) used += f->litlen[s] != 0;
    for (unsigned s = 257; s < LITLEN_CODES && used < 2; s++) used += f->litlen[s] != 0;
    if (used == 0) f->litlen[0] = 1;
    used = 0;
    for (unsigned s = 0; s < DIST_CODES; s++) used += f->dist[s] != 0;
    if (used < 2) f->dist[f->dist[0] ? 1 : 0] = 1;
    if (used == 0) f->dist[1] = 1;

    uint8_t lengths[LITLEN_CODES + DIST_CODES];
    huffman_lengths(f->litlen, LITLEN_CODES, 15, lengths);
    huffman_lengths(f->dist, DIST_CODES, 15, lengths + LITLEN_CODES);
    unsigned hlit = LITLEN_CODES, hdist = DIST_CODES;
    while (hlit > 257 && lengths[hlit - 1] == 0) hlit--;
    while (hdist > 1 && lengths[LITLEN_CODES + hdist - 1] == 0) hdist--;
    uint8_t packed[LITLEN_CODES + DIST_CODES];
    memcpy(packed, lengths, hlit);
    memcpy(packed + hlit, lengths + LITLEN_CODES, hdist);
    LengthRuns runs;
    run_length_code(packed, hlit + hdist, &runs);
    uint32_t codelen_freq[CODELEN_CODES] = {0};
    for (unsigned i = 0; i < runs.count; i++) codelen_freq[runs.symbol[i]]++;
    unsigned codelen_used = 0;
    for (unsigned s = 0; s < CODELEN_CODES; s++) codelen_used += codelen_freq[s] != 0;
    if (codelen_used < 2) codelen_freq[codelen_freq[0] ? 1 : 0]++;
    uint8_t codelen_lengths[CODELEN_CODES];
    huffman_lengths(codelen_freq, CODELEN_CODES, 7, codelen_lengths);
    unsigned hclen = CODELEN_CODES;
    while (hclen > 4 && codelen_lengths[codelen_order[hclen - 1]] == 0) hclen--;

    // The size of each choice, in bits.
    uint64_t dynamic = 3 + 5 + 5 + 4 + 3 * hclen;
    for (unsigned i = 0; i < runs.count; i++) dynamic += codelen_lengths[runs.symbol[i]] + codelen_extra_bits[runs.symbol[i]];
    for (unsigned s = 0; s < LITLEN_CODES; s++) {
        unsigned extra = s >= 265 && s < 285 ? (s - 261) / 4 : 0;
        dynamic += (uint64_t)f->litlen[s] * (lengths[s] + extra);
    }
    for (unsigned s = 0; s < DIST_CODES; s++) {
        unsigned extra = s >= 4 ? s / 2 - 1 : 0;
        dynamic += (uint64_t)f->dist[s] * (lengths[LITLEN_CODES + s] + extra);
    }
    uint64_t stored = (uint64_t)(raw_length + 5 * (raw_length / 65535 + 1)) * 8 + 7;
    if (stored <= dynamic) {
        write_stored(w, raw, raw_length, final);
        return;
    }

    uint16_t codes[LITLEN_CODES + DIST_CODES], codelen_codes[CODELEN_CODES];
    huffman_codes(lengths, LITLEN_CODES, codes);
    huffman_codes(lengths + LITLEN_CODES, DIST_CODES, codes + LITLEN_CODES);
    huffman_codes(codelen_lengths, CODELEN_CODES, codelen_codes);
    put_bits(w, final ? 1 : 0, 1);
    put_bits(w, 2, 2);
    put_bits(w, hlit - 257, 5);
    put_bits(w, hdist - 1, 5);
    put_bits(w, hclen - 4, 4);
    for (unsigned i = 0; i < hclen; i++) put_bits(w, codelen_lengths[codelen_order[i]], 3);
    for (unsigned i = 0; i < runs.count; i++) {
        unsigned s = runs.symbol[i];
        put_bits(w, codelen_codes[s], codelen_lengths[s]);
        if (codelen_extra_bits[s]) put_bits(w, runs.extra[i], codelen_extra_bits[s]);
    }
    // Each literal's and each length's code with its extra bits, and the
    // number of bits: one load a symbol instead of working the code out.
    uint32_t litlen_bits[256 + 256];
    uint8_t litlen_count[256 + 256];
    for (unsigned s = 0; s < 256; s++) litlen_bits[s] = codes[s], litlen_count[s] = lengths[s];
    for (unsigned l = 0; l < 256; l++) {
        unsigned lc = length_code_of[l], lx = length_extra_bits(l);
        litlen_bits[256 + l] = codes[lc] | ((l & ((1u << lx) - 1)) << lengths[lc]);
        litlen_count[256 + l] = (uint8_t)(lengths[lc] + lx);
    }
    uint32_t dist_bits[DIST_CODES], dist_mask[DIST_CODES];
    uint8_t dist_shift[DIST_CODES], dist_count[DIST_CODES];
    for (unsigned dc = 0; dc < DIST_CODES; dc++) {
        unsigned dx = dc < 4 ? 0 : dc / 2 - 1;
        dist_bits[dc] = codes[LITLEN_CODES + dc];
        dist_mask[dc] = (1u << dx) - 1;
        dist_shift[dc] = lengths[LITLEN_CODES + dc];
        dist_count[dc] = (uint8_t)(lengths[LITLEN_CODES + dc] + dx);
    }
    // The bit writer's state in locals: stores into the output (bytes)
    // could alias it, which kept the compiler reloading it after every one.
    uint8_t *out = w->out;
    size_t pos = w->pos;
    uint64_t bits = w->bits;
    unsigned count = w->count;
#define FLUSH32()                                  \
    if (count >= 32) {                             \
        uint32_t word = (uint32_t)bits;            \
        memcpy(out + pos, &word, 4);               \
        pos += 4, bits >>= 32, count -= 32;        \
    }
    for (unsigned i = 0; i < n; i++) {
        uint32_t symbol = symbols[i];
        if (!(symbol & MATCH_FLAG)) {
            bits |= (uint64_t)litlen_bits[symbol] << count;
            count += litlen_count[symbol];
            FLUSH32()
            continue;
        }
        // The length's code and extra bits (<= 20 bits), then the distance's
        // code (<= 15) and extra bits (<= 13): at most 32 bits after a flush.
        unsigned l = 256 + (symbol & 0xFF), d = (symbol >> 8) & 0x7FFF;
        bits |= (uint64_t)litlen_bits[l] << count;
        count += litlen_count[l];
        FLUSH32()
        unsigned dc = distance_code_fast(d);
        bits |= (uint64_t)(dist_bits[dc] | ((d & dist_mask[dc]) << dist_shift[dc])) << count;
        count += dist_count[dc];
        FLUSH32()
    }
#undef FLUSH32
    w->pos = pos, w->bits = bits, w->count = count;
    put_bits(w, codes[256], lengths[256]);
}

// ---------------------------------------------------------------- matching

static inline uint32_t hash4(const uint8_t *p) { return (load32(p) * 2654435761u) >> (32 - HASH_BITS); }

// Positions are stored plus one: zero is an empty slot. The newest comes first.
static inline void remember(uint32_t *table, uint32_t hash, size_t position) {
    uint32_t *slots = table + (size_t)hash * WAYS;
    for (int i = WAYS - 1; i > 0; i--) slots[i] = slots[i - 1];
    slots[0] = (uint32_t)(position + 1);
}

// The length of the common prefix of a and b, from `known` bytes on, at most limit.
static inline size_t match_length(const uint8_t *a, const uint8_t *b, size_t known, size_t limit) {
    size_t len = known;
    while (len + 8 <= limit) {
        uint64_t x = load64(a + len) ^ load64(b + len);
        if (x) return len + ((size_t)__builtin_ctzll(x) >> 3);
        len += 8;
    }
    while (len < limit && a[len] == b[len]) len++;
    return len;
}

size_t badge_deflate_bound(size_t length) {
    // Every block at worst stored: 5 bytes per 64 KB part and a byte of
    // alignment, a block at least every 32 K bytes (each symbol stands for a
    // byte or more), and the closing block.
    return length + length / 2048 + 64;
}

typedef struct {
    uint32_t table[(size_t)WAYS << HASH_BITS];
    uint32_t symbols[BLOCK_SYMBOLS];
    Frequencies freq;
} Scratch;

size_t badge_deflate_scratch_size(void) { return sizeof(Scratch); }

size_t badge_deflate(const uint8_t *data, size_t history, size_t length, int last, uint8_t *out, size_t capacity,
                     void *scratch) {
    if (capacity < badge_deflate_bound(length)) return 0;
    pthread_once(&code_tables_once, make_code_tables);
    Scratch *tables = scratch;
    uint32_t *table = tables->table, *symbols = tables->symbols;
    Frequencies *freq = &tables->freq;
    memset(table, 0, sizeof(tables->table));
    memset(freq, 0, sizeof(Frequencies));
    BitWriter w = {out, 0, 0, 0};
    const size_t end = history + length;
    size_t from = history > WINDOW ? history - WINDOW : 0;
    for (size_t p = from; p + MIN_MATCH <= history; p++) remember(table, hash4(data + p), p);

    size_t p = history, block_start = history;
    unsigned n = 0;
    while (p < end) {
        if (p + MIN_MATCH <= end) {
            uint32_t hash = hash4(data + p);
            const uint32_t *slots = table + (size_t)hash * WAYS;
            const uint8_t *here = data + p, *best = NULL;
            size_t limit = end - p < MAX_MATCH ? end - p : MAX_MATCH, len = 0;
            for (int k = 0; k < WAYS && slots[k] && p - (slots[k] - 1) <= WINDOW; k++) {
                const uint8_t *there = data + slots[k] - 1;
                if (load32(there) != load32(here)) continue;
                size_t l = match_length(here, there, MIN_MATCH, limit);
                // Of two matches of the longest length, one at least
                // NEAR_DISTANCE back is taken over a nearer one: an inflater
                // copies a match that overlaps itself closely one byte at a
                // time, each waiting for the byte it just wrote. A run of
                // zeros (a badge's transparent corners) then repeats the match
                // before it rather than the byte before it (zlib 1.2.13
                // inflates a 1024 px badge's 4 MB a fifth faster, for 0.7%
                // more bytes).
                if (l > len) {
                    len = l, best = there;
                    if (l == limit && here - there >= NEAR_DISTANCE) break;
                } else if (l == limit && here - best < NEAR_DISTANCE && here - there >= NEAR_DISTANCE) {
                    best = there;
                    break;
                }
            }
            remember(table, hash, p);
            if (best) {
                unsigned l = (unsigned)(len - 3), d = (unsigned)(here - best - 1);
                symbols[n++] = MATCH_FLAG | d << 8 | l;
                freq->litlen[length_code_of[l]]++;
                freq->dist[distance_code_fast(d)]++;
                if (len <= SHORT_MATCH) {
                    for (size_t q = p + 1; q < p + len && q + MIN_MATCH <= end; q++) remember(table, hash4(data + q), q);
                } else if (p + len - 1 + MIN_MATCH <= end) {
                    remember(table, hash4(data + p + len - 1), p + len - 1);
                }
                p += len;
                goto next;
            }
        }
        symbols[n++] = data[p];
        freq->litlen[data[p]]++;
        p++;
    next:
        if (n >= BLOCK_SYMBOLS || p - block_start >= BLOCK_INPUT) {
            write_block(&w, symbols, n, freq, data + block_start, p - block_start, last && p == end);
            memset(freq, 0, sizeof(Frequencies));
            n = 0;
            block_start = p;
        }
    }
    if (n > 0 || block_start == history) {
        write_block(&w, symbols, n, freq, data + block_start, p - block_start, last);
    }
    if (!last) {
        // An empty stored block: the stream continues on a byte boundary.
        put_bits(&w, 0, 3);
        align_to_byte(&w);
        static const uint8_t marker[4] = {0, 0, 0xFF, 0xFF};
        memcpy(w.out + w.pos, marker, 4);
        w.pos += 4;
    } else {
        align_to_byte(&w);
    }
    return w.pos;
}
