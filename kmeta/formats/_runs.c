/* The compiled twin of kmeta/formats/runs.py: see that module for what each function
 * means.  Its pure-Python functions are the reference; tests/test_runs.py proves that
 * both give the same answers on every fixture, every real file and mutated bytes.
 *
 * Only what a scan does once per batch or record lives here: CRC-32C, finding how many
 * batches after one repeat it, filling a text template once per batch of such a run, and
 * the records of a plain records section (kmeta/formats/batch.py's _decode_records);
 * and, for verify's replay process, the partition records of a batch that raise no
 * problem, applied to the image (kmeta/ops/replay/engine.py's apply_changes_py is the reference:
 * tests/test_image_fast.py and the fuzz campaign compare them).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ CRC-32C */

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_soft(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                      (uint32_t)p[7] << 24;
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
              crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
              crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_HW_CRC 1
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = ~crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
/* Three streams at once: the crc32 instruction takes three cycles and the CPU can start
 * one a cycle, so a block of three equal parts is summed in three independent registers,
 * then joined.  The CRC is linear: the state after A then B, from s, is the state after
 * len(B) zero bytes from (the state after A) xor the state after B from 0; "after L zero
 * bytes" is a linear map of 32 bits, kept as four 256-entry tables per part length. */
static const size_t PART[3] = {1024, 256, 64};
static uint32_t zeros_tab[3][4][256];

static uint32_t after_zeros(uint32_t state, size_t len) {
    static const unsigned char zero[64];
    while (len) {
        size_t k = len < sizeof zero ? len : sizeof zero;
        state = ~crc_soft(~state, zero, k);
        len -= k;
    }
    return state;
}

static void zeros_init(void) {
    for (int k = 0; k < 3; k++) {
        uint32_t basis[32];
        for (int bit = 0; bit < 32; bit++) basis[bit] = after_zeros(1u << bit, PART[k]);
        for (int j = 0; j < 4; j++)
            for (uint32_t b = 0; b < 256; b++) {
                uint32_t v = 0;
                for (int bit = 0; bit < 8; bit++)
                    if (b >> bit & 1) v ^= basis[8 * j + bit];
                zeros_tab[k][j][b] = v;
            }
    }
}

static inline uint32_t shift_zeros(int k, uint32_t c) {
    return zeros_tab[k][0][c & 0xff] ^ zeros_tab[k][1][(c >> 8) & 0xff] ^
           zeros_tab[k][2][(c >> 16) & 0xff] ^ zeros_tab[k][3][c >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw3(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c0 = (uint32_t)~crc;
    for (int k = 0; k < 3; k++) {
        size_t part = PART[k];
        while (n >= 3 * part) {
            uint64_t c1 = 0, c2 = 0;
            const unsigned char *p1 = p + part, *p2 = p + 2 * part;
            for (size_t i = 0; i < part; i += 8) {
                uint64_t v0, v1, v2;
                memcpy(&v0, p + i, 8);
                memcpy(&v1, p1 + i, 8);
                memcpy(&v2, p2 + i, 8);
                c0 = __builtin_ia32_crc32di(c0, v0);
                c1 = __builtin_ia32_crc32di(c1, v1);
                c2 = __builtin_ia32_crc32di(c2, v2);
            }
            c0 = shift_zeros(k, (uint32_t)c0) ^ (uint32_t)c1;
            c0 = shift_zeros(k, (uint32_t)c0) ^ (uint32_t)c2;
            p += 3 * part;
            n -= 3 * part;
        }
    }
    return crc_hw(~(uint32_t)c0, p, n);
}
#endif

static uint32_t (*crc_impl)(uint32_t, const unsigned char *, size_t) = crc_soft;

static PyObject *py_crc32c(PyObject *self, PyObject *args) {
    Py_buffer data;
    unsigned int start = 0;
    if (!PyArg_ParseTuple(args, "y*|I", &data, &start)) return NULL;
    uint32_t c;
    Py_BEGIN_ALLOW_THREADS
    c = crc_impl(start, data.buf, (size_t)data.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLong(c);
}

/* ------------------------------------------------------------------ batch header */

/* Byte positions in a v2 batch header (formats/batch.py's FIELD_BYTES; runs.py checks
 * at import that they agree). */
enum {
    AT_BASE = 0, AT_LENGTH = 8, AT_EPOCH = 12, AT_MAGIC = 16, AT_CRC = 17, AT_ATTRS = 21,
    AT_DELTA = 23, AT_BASE_TS = 27, AT_MAX_TS = 35, AT_PRODUCER = 43, HEADER = 61,
    OVERHEAD = 12
};

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* one load and a byte swap (the loop below is not always seen as one) */
static inline int64_t be64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return (int64_t)__builtin_bswap64(v);
}

static inline int32_t be32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return (int32_t)__builtin_bswap32(v);
}
#else
static inline int64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return (int64_t)v;
}

static inline int32_t be32(const unsigned char *p) {
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}
#endif

static PyObject *py_run_length(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, limit, max_count;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &pos, &limit, &max_count)) return NULL;
    const unsigned char *buf = view.buf;
    if (limit > view.len) limit = view.len;
    Py_ssize_t count = 0;
    if (pos >= 0 && pos + HEADER <= limit) {
        const unsigned char *ref = buf + pos;
        int32_t length = be32(ref + AT_LENGTH);
        Py_ssize_t size = (Py_ssize_t)length + OVERHEAD;
        if (length >= HEADER - OVERHEAD && ref[AT_MAGIC] == 2) {
            int64_t step = (int64_t)be32(ref + AT_DELTA) + 1;
            /* two's complement difference, as Python computes it on the unpacked ints */
            uint64_t ts_gap = (uint64_t)be64(ref + AT_MAX_TS) - (uint64_t)be64(ref + AT_BASE_TS);
            int64_t base = be64(ref + AT_BASE);
            Py_ssize_t q = pos + size;
            Py_BEGIN_ALLOW_THREADS
            while (count < max_count && q + size <= limit) {
                const unsigned char *b = buf + q;
                if (memcmp(b + AT_LENGTH, ref + AT_LENGTH, AT_CRC - AT_LENGTH) != 0 ||
                    memcmp(b + AT_ATTRS, ref + AT_ATTRS, AT_BASE_TS - AT_ATTRS) != 0 ||
                    memcmp(b + AT_PRODUCER, ref + AT_PRODUCER, size - AT_PRODUCER) != 0)
                    break;
                int64_t b_base = be64(b + AT_BASE);
                if ((uint64_t)b_base != (uint64_t)base + (uint64_t)step) break;
                if ((uint64_t)be64(b + AT_MAX_TS) - (uint64_t)be64(b + AT_BASE_TS) != ts_gap)
                    break;
                if (crc_impl(0, b + AT_ATTRS, size - AT_ATTRS) != (uint32_t)be32(b + AT_CRC))
                    break;
                base = b_base;
                count++;
                q += size;
            }
            Py_END_ALLOW_THREADS
        }
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

/* walk_py's twin: intact v2 batches walked by header and CRC.  The offsets are Python
 * ints there; here a value that does not fit an int64 (an argument, or a batch's base
 * offset + lastOffsetDelta + 1) ends the walk before that batch, which the caller then
 * reads by its own path: either way the same batches are judged the same. */
/* The size of the batch whose header is at `b`, or -1 where a walk stops before it: a
 * length too short for a v2 header, another magic, or offsets going back below `next`. */
static inline Py_ssize_t batch_size(const unsigned char *b, long long next) {
    int32_t length = be32(b + AT_LENGTH);
    if (length < HEADER - OVERHEAD || b[AT_MAGIC] != 2 || be64(b + AT_BASE) < next)
        return -1;
    return OVERHEAD + (Py_ssize_t)length;
}

/* Whether the batch at `b`, its `size` bytes all at hand, is intact (CRC-32C, offsets
 * that do not overflow); if so the walk's state moves past it. */
static inline int take_batch(const unsigned char *b, Py_ssize_t size, long long *next,
                             long long *epoch, long long *high) {
    long long after;
    if (__builtin_add_overflow((long long)be64(b + AT_BASE), (long long)be32(b + AT_DELTA) + 1,
                               &after))
        return 0;
    if (crc_impl(0, b + AT_ATTRS, (size_t)(size - AT_ATTRS)) != (uint32_t)be32(b + AT_CRC))
        return 0;
    *next = after;
    if (after > *high) *high = after;
    int32_t e = be32(b + AT_EPOCH);
    if (e > *epoch) *epoch = e;
    return 1;
}

/* A walk's state from Python's ints: 0 with an error set when one is not an int, else 1,
 * with `*usable` 0 where either does not fit a long long (the walk then takes nothing). */
static int walk_state(PyObject *next_obj, PyObject *epoch_obj, long long *next,
                      long long *epoch, int *usable) {
    int over_next = 0, over_epoch = 0;
    *next = PyLong_AsLongLongAndOverflow(next_obj, &over_next);
    *epoch = *next == -1 && PyErr_Occurred() ? 0 :
        PyLong_AsLongLongAndOverflow(epoch_obj, &over_epoch);
    if (PyErr_Occurred())
        return 0;
    *usable = !over_next && !over_epoch;
    return 1;
}

/* What a walk answers: where it stopped, how many batches it took, and the state after
 * them (the ints it was given back when it took none). */
static PyObject *walk_result(Py_ssize_t pos, Py_ssize_t count, PyObject *next_obj,
                             PyObject *epoch_obj, long long next, long long epoch,
                             long long high) {
    if (!count)
        return Py_BuildValue("nnOOO", pos, count, next_obj, epoch_obj, next_obj);
    return Py_BuildValue("nnLLL", pos, count, next, epoch, high);
}

static PyObject *py_walk(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, limit, stop;
    PyObject *next_obj, *epoch_obj;
    if (!PyArg_ParseTuple(args, "y*nnnOO", &view, &pos, &limit, &stop, &next_obj, &epoch_obj))
        return NULL;
    long long next, epoch;
    int usable;
    if (!walk_state(next_obj, epoch_obj, &next, &epoch, &usable)) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t count = 0;
    long long high = next;
    if (usable && pos >= 0) {
        const unsigned char *buf = view.buf;
        if (limit > view.len) limit = view.len;
        Py_BEGIN_ALLOW_THREADS
        while (pos < stop && pos + HEADER <= limit) {
            const unsigned char *b = buf + pos;
            Py_ssize_t size = batch_size(b, next);
            if (size < 0 || pos + size > limit || !take_batch(b, size, &next, &epoch, &high))
                break;
            count++;
            pos += size;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    return walk_result(pos, count, next_obj, epoch_obj, next, epoch, high);
}

/* walk_file_py's twin: the same walk over the file itself, read with pread into the
 * caller's scratch buffer a chunk at a time (a batch cut by a chunk's end is moved to the
 * buffer's start and read whole), so the bytes cost one copy from the page cache and no
 * page of a mapping.  It stops where walk would, and also before a batch longer than the
 * scratch buffer and where a read fails or comes up short: the caller's own path reads
 * from there and says why. */
static PyObject *py_walk_file(PyObject *self, PyObject *args) {
    int fd;
    Py_buffer scratch;
    Py_ssize_t pos, n, stop;
    PyObject *next_obj, *epoch_obj;
    if (!PyArg_ParseTuple(args, "iw*nnnOO", &fd, &scratch, &pos, &n, &stop, &next_obj,
                          &epoch_obj))
        return NULL;
    long long next, epoch;
    int usable;
    if (!walk_state(next_obj, epoch_obj, &next, &epoch, &usable)) {
        PyBuffer_Release(&scratch);
        return NULL;
    }
    Py_ssize_t count = 0;
    long long high = next;
    if (usable && pos >= 0 && scratch.len >= HEADER) {
        unsigned char *buf = scratch.buf;
        Py_ssize_t cap = scratch.len;
        Py_ssize_t start = pos, have = 0;  /* buf holds the file's bytes start..start+have */
        Py_BEGIN_ALLOW_THREADS
        while (pos < stop && pos + HEADER <= n) {
            Py_ssize_t rel = pos - start;
            if (rel + HEADER > have) {
                if (rel) {
                    memmove(buf, buf + rel, (size_t)(have - rel));
                    have -= rel;
                    start = pos;
                    rel = 0;
                }
                Py_ssize_t want = cap - have;
                if (want > n - (start + have)) want = n - (start + have);
                ssize_t got = want > 0 ? pread(fd, buf + have, (size_t)want, start + have) : 0;
                if (got <= 0) break;
                have += got;
                continue;
            }
            const unsigned char *b = buf + rel;
            Py_ssize_t size = batch_size(b, next);
            if (size < 0 || pos + size > n || size > cap)
                break;
            if (rel + size > have) {  /* the batch's end is not read yet */
                memmove(buf, b, (size_t)(have - rel));
                have -= rel;
                start = pos;
                Py_ssize_t want = cap - have;
                if (want > n - (start + have)) want = n - (start + have);
                ssize_t got = want > 0 ? pread(fd, buf + have, (size_t)want, start + have) : 0;
                if (got <= 0) break;
                have += got;
                continue;
            }
            if (!take_batch(b, size, &next, &epoch, &high))
                break;
            count++;
            pos += size;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&scratch);
    return walk_result(pos, count, next_obj, epoch_obj, next, epoch, high);
}

/* The big-endian int64 at byte `at` of each of `count` records of `stride` bytes, as
 * int64s in this machine's byte order (what array('q') and Arrow read). */
static PyObject *py_gather_int64(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t at, stride, count;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &at, &stride, &count)) return NULL;
    PyObject *out = NULL;
    if (at < 0 || stride < 8 || at > stride - 8 || count < 0 ||
        count > view.len / stride) {
        PyErr_SetString(PyExc_ValueError, "gather_int64: the records overrun the buffer");
    } else if ((out = PyBytes_FromStringAndSize(NULL, count * 8)) != NULL) {
        const unsigned char *src = (const unsigned char *)view.buf + at;
        char *dst = PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < count; i++, src += stride, dst += 8) {
            int64_t v = be64(src);
            memcpy(dst, &v, 8);
        }
    }
    PyBuffer_Release(&view);
    return out;
}

/* ------------------------------------------------------------------ templates */

typedef struct {
    const char *text;  /* a literal (UTF-8 or bytes), or NULL for a field */
    Py_ssize_t len;
    Py_ssize_t at;     /* field: byte position in the batch */
    int kind;          /* field: 0 the batch's file position, 4 int32, 5 uint32, 8 int64 */
    int64_t add;
    /* field: the digits of its last value of 5 digits or more, and that value / 10**4:
     * along a run a position, an offset or a timestamp keeps all but its last digits
     * from one batch to the next, which are then copied, not worked out again */
    int known, ndigits;
    uint64_t high;
    char digits[24];
} Part;

/* Bytes written past the end of the text (copies of whole 16 or 24 byte blocks), which
 * every buffer fill writes to has on top. */
#define FILL_SLACK 32

/* "00".."99": two digits per division, half the divisions of one digit at a time (a
 * run's text is mostly numbers of 10 to 19 digits). */
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline void put_pair(char *at, uint32_t v) {  /* v < 100 */
    memcpy(at, DIGIT_PAIRS + 2 * v, 2);
}

/* exactly 8 digits of v < 10**8, in 32-bit arithmetic: two halves formed side by side */
static inline void put_eight(char *at, uint32_t v) {
    uint32_t hi = v / 10000, lo = v % 10000;
    put_pair(at, hi / 100);
    put_pair(at + 2, hi % 100);
    put_pair(at + 4, lo / 100);
    put_pair(at + 6, lo % 100);
}

static const uint64_t POW10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};

/* v in decimal at out; returns the end.  The length is known first, so the digits go
 * straight to their place, eight at a time. */
static char *put_int(char *out, int64_t v) {
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (v < 0) *out++ = '-';
    /* digits: from the bit length (log10(2) ~ 1233/4096), one step up where it passes */
    int bits = 64 - __builtin_clzll(u | 1);
    int n = (bits * 1233) >> 12;
    n += n < 20 && u >= POW10[n];
    if (n == 0) n = 1;
    char *end = out + n, *t = end;
    while (u >= 100000000) {
        t -= 8;
        put_eight(t, (uint32_t)(u % 100000000));
        u /= 100000000;
    }
    uint32_t w = (uint32_t)u;
    while (w >= 100) {
        t -= 2;
        put_pair(t, w % 100);
        w /= 100;
    }
    if (w >= 10) put_pair(t - 2, w);
    else t[-1] = (char)('0' + w);
    return end;
}

/* fill(raw, count, size, first_position, parts, sep): str parts and a str sep give str;
 * bytes parts and a bytes sep give bytes, written in place (for a writer that takes the
 * bytes as they are: no text object to make, join and encode again). */
static PyObject *py_fill(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count, size, first_position;
    PyObject *parts_obj, *sep_obj;
    if (!PyArg_ParseTuple(args, "y*nnnOO", &view, &count, &size, &first_position,
                          &parts_obj, &sep_obj))
        return NULL;
    PyObject *result = NULL, *parts = NULL;
    Part *spec = NULL;
    char *out = NULL, *arena = NULL;
    int as_bytes = PyBytes_Check(sep_obj);
    if (!as_bytes && !PyUnicode_Check(sep_obj)) {
        PyErr_SetString(PyExc_TypeError, "sep must be str or bytes");
        goto done;
    }
    if (count < 0 || size <= 0 || count > view.len / size) {
        PyErr_SetString(PyExc_ValueError, "count and size reach past the bytes given");
        goto done;
    }
    parts = PySequence_Fast(parts_obj, "parts must be a sequence");
    if (!parts) goto done;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(parts);
    spec = PyMem_Calloc((size_t)np + 1, sizeof(Part));
    if (!spec) { PyErr_NoMemory(); goto done; }
    Py_ssize_t literal = 0, fields = 0;
    for (Py_ssize_t i = 0; i < np; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(parts, i);
        if (PyUnicode_Check(it) || PyBytes_Check(it)) {
            if (PyBytes_Check(it) != as_bytes) {
                PyErr_SetString(PyExc_TypeError, "a literal part of another type than sep");
                goto done;
            }
            if (as_bytes) {
                spec[i].text = PyBytes_AS_STRING(it);
                spec[i].len = PyBytes_GET_SIZE(it);
            } else {
                spec[i].text = PyUnicode_AsUTF8AndSize(it, &spec[i].len);
                if (!spec[i].text) goto done;
            }
            literal += spec[i].len;
        } else {
            long long add;
            if (!PyTuple_Check(it)) {
                PyErr_SetString(PyExc_TypeError, "a part must be a literal or a field tuple");
                goto done;
            }
            if (!PyArg_ParseTuple(it, "niL", &spec[i].at, &spec[i].kind, &add)) goto done;
            spec[i].add = add;
            int width = spec[i].kind == 8 ? 8 : spec[i].kind == 0 ? 0 : 4;
            if ((spec[i].kind != 0 && spec[i].kind != 4 && spec[i].kind != 5 &&
                 spec[i].kind != 8) || spec[i].at < 0 || spec[i].at + width > size) {
                PyErr_SetString(PyExc_ValueError, "a field outside the batch");
                goto done;
            }
            fields++;
        }
    }
    Py_ssize_t sep_len;
    const char *sep;
    if (as_bytes) {
        sep = PyBytes_AS_STRING(sep_obj);
        sep_len = PyBytes_GET_SIZE(sep_obj);
    } else {
        sep = PyUnicode_AsUTF8AndSize(sep_obj, &sep_len);
        if (!sep) goto done;
    }
    /* The short literals (most of them: the keys between two numbers) copied into one
     * arena with 32 bytes after each, so that the loop copies each as two 16-byte
     * blocks, whatever its length, and never reads past what it owns. */
    arena = PyMem_Calloc(1, (size_t)literal + 32 * ((size_t)np + 1));
    if (!arena) { PyErr_NoMemory(); goto done; }
    char *a = arena;
    for (Py_ssize_t i = 0; i < np; i++) {
        if (spec[i].text && spec[i].len <= 32) {
            memcpy(a, spec[i].text, (size_t)spec[i].len);
            spec[i].text = a;
            a += spec[i].len + 32;
        }
    }
    /* 20 digits and a sign: the longest int64 */
    size_t per = (size_t)literal + (size_t)fields * 21 + (size_t)sep_len;
    if (count && per > (size_t)(PY_SSIZE_T_MAX - 2 * FILL_SLACK) / (size_t)count) {
        PyErr_NoMemory();
        goto done;
    }
    size_t most = per * (size_t)count + FILL_SLACK;
    char *w;
    if (as_bytes) {
        result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)most);
        if (!result) goto done;
        w = out = PyBytes_AS_STRING(result);
    } else {
        out = PyMem_Malloc(most);
        if (!out) { PyErr_NoMemory(); goto done; }
        w = out;
    }
    const unsigned char *buf = view.buf;
    for (Py_ssize_t k = 0; k < count; k++) {
        const unsigned char *b = buf + k * size;
        if (k) { memcpy(w, sep, (size_t)sep_len); w += sep_len; }
        for (Py_ssize_t i = 0; i < np; i++) {
            Part *p = &spec[i];
            if (p->text) {
                if (p->len <= 32) {  /* in the arena: two blocks, the rest is overwritten */
                    memcpy(w, p->text, 16);
                    memcpy(w + 16, p->text + 16, 16);
                } else {
                    memcpy(w, p->text, (size_t)p->len);
                }
                w += p->len;
                continue;
            }
            int64_t v;
            switch (p->kind) {
            case 0: v = (int64_t)(first_position + k * size); break;
            case 4: v = be32(b + p->at); break;
            case 5: v = (int64_t)(uint32_t)be32(b + p->at); break;
            default: v = be64(b + p->at); break;
            }
            v = (int64_t)((uint64_t)v + (uint64_t)p->add);
            if (v < 10000) {
                w = put_int(w, v);
                continue;
            }
            uint64_t high = (uint64_t)v / 10000;
            uint32_t low = (uint32_t)((uint64_t)v - high * 10000);
            if (!p->known || high != p->high) {
                p->ndigits = (int)(put_int(p->digits, v) - p->digits);
                p->high = high;
                p->known = 1;
            }
            memcpy(w, p->digits, 24);  /* the same leading digits; the last four: */
            put_pair(w + p->ndigits - 4, low / 100);
            put_pair(w + p->ndigits - 2, low % 100);
            w += p->ndigits;
        }
    }
    if (as_bytes) {
        Py_ssize_t n = w - out;
        out = NULL;  /* the result's own: not freed below */
        if (_PyBytes_Resize(&result, n) < 0) result = NULL;
    } else {
        result = PyUnicode_DecodeUTF8(out, w - out, "strict");
    }
done:
    if (!as_bytes) PyMem_Free(out);
    PyMem_Free(arena);
    PyMem_Free(spec);
    Py_XDECREF(parts);
    PyBuffer_Release(&view);
    return result;
}


/* ------------------------------------------------------------------ records */

/* A zigzag varint of at most `most` bytes at *p (before end); 0 when it is longer, cut
 * or `most` is reached: the caller then leaves the section to the Python reader, which
 * says what is wrong (or reads the rare wide value exactly). */
static inline int zigzag(const unsigned char **p, const unsigned char *end, int most,
                         int64_t *out) {
    uint64_t v = 0;
    int shift = 0;
    for (int i = 0; i < most; i++) {
        if (*p >= end) return 0;
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return 1;
        }
        shift += 7;
    }
    return 0;
}

static PyObject *blob(const unsigned char **p, const unsigned char *end, int *ok) {
    int64_t len;
    if (*p < end && **p == 1) {  /* -1 in one byte: null (as the Python reader has it) */
        (*p)++;
        Py_INCREF(Py_None);
        return Py_None;
    }
    if (!zigzag(p, end, 4, &len) || len < 0 || len > end - *p) { *ok = 0; return NULL; }
    PyObject *b = PyBytes_FromStringAndSize((const char *)*p, (Py_ssize_t)len);
    if (!b) { *ok = -1; return NULL; }
    *p += len;
    return b;
}

static PyObject *py_decode_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count;
    long long base_offset, base_ts, base_seq;
    PyTypeObject *record_type;
    PyObject *no_headers;
    if (!PyArg_ParseTuple(args, "y*nLLLO!O!", &view, &count, &base_offset, &base_ts,
                          &base_seq, &PyType_Type, &record_type, &PyTuple_Type, &no_headers))
        return NULL;
    PyObject *out = NULL;
    const unsigned char *p = view.buf, *n = p + view.len;
    if (count < 0 || count > view.len / 7 || !PyType_IsSubtype(record_type, &PyTuple_Type))
        goto fallback;
    out = PyList_New(count);
    if (!out) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t length, ts_delta, off_delta;
        if (!zigzag(&p, n, 4, &length) || length < 6 || length > n - p) goto fallback;
        const unsigned char *end = p + length;
        unsigned char attributes = *p++;
        if (!zigzag(&p, end, 9, &ts_delta) || !zigzag(&p, end, 4, &off_delta)) goto fallback;
        int ok = 1;
        PyObject *key = blob(&p, end, &ok);
        if (!key) { if (ok < 0) goto error; goto fallback; }
        PyObject *value = blob(&p, end, &ok);
        if (!value) { Py_DECREF(key); if (ok < 0) goto error; goto fallback; }
        /* headers, or bytes beyond the fields: the Python reader's business */
        if (p >= end || *p != 0 || p + 1 != end) {
            Py_DECREF(key); Py_DECREF(value);
            goto fallback;
        }
        p = end;
        long long offset, ts, seq = -1;
        if (__builtin_add_overflow(base_offset, (long long)off_delta, &offset) ||
            __builtin_add_overflow(base_ts, (long long)ts_delta, &ts) ||
            (base_seq >= 0 && __builtin_add_overflow(base_seq, (long long)off_delta, &seq))) {
            Py_DECREF(key); Py_DECREF(value);
            goto fallback;
        }
        PyObject *r = record_type->tp_alloc(record_type, 7);
        if (!r) { Py_DECREF(key); Py_DECREF(value); goto error; }
        PyObject *o = PyLong_FromLongLong(offset), *t = PyLong_FromLongLong(ts),
                 *a = PyLong_FromLong(attributes), *q = PyLong_FromLongLong(seq);
        PyTuple_SET_ITEM(r, 0, o);
        PyTuple_SET_ITEM(r, 1, t);
        PyTuple_SET_ITEM(r, 2, key);
        PyTuple_SET_ITEM(r, 3, value);
        Py_INCREF(no_headers);
        PyTuple_SET_ITEM(r, 4, no_headers);
        PyTuple_SET_ITEM(r, 5, a);
        PyTuple_SET_ITEM(r, 6, q);
        PyList_SET_ITEM(out, i, r);
        if (!o || !t || !a || !q) goto error;
    }
    if (p != n) goto fallback;
    goto done;
fallback:
    Py_XDECREF(out);
    out = Py_None;
    Py_INCREF(out);
    goto done;
error:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&view);
    return out;
}

/* The record at *p (before n) when it is plain, the `i`-th of its batch: offset delta
 * `i`, timestamp delta 0, a null key, a value that is not empty, no header.  Then its
 * value is `*value` (`*len` bytes) and *p moves past the record: 1; else 0. */
static int plain_record(const unsigned char **p, const unsigned char *n, Py_ssize_t i,
                        const unsigned char **value, Py_ssize_t *len) {
    int64_t length, ts_delta, off_delta, size;
    const unsigned char *q = *p;
    if (!zigzag(&q, n, 4, &length) || length < 6 || length > n - q) return 0;
    const unsigned char *end = q + length;
    q++;  /* attributes: unused, as the reader leaves them */
    if (!zigzag(&q, end, 9, &ts_delta) || ts_delta != 0 ||
        !zigzag(&q, end, 4, &off_delta) || off_delta != i)
        return 0;
    if (q >= end || *q != 1) return 0;  /* a key: -1 in one byte, null */
    q++;
    if (!zigzag(&q, end, 4, &size) || size <= 0 || size > end - q) return 0;
    if (q + size >= end || q[size] != 0 || q + size + 1 != end) return 0;  /* no header */
    *value = q;
    *len = (Py_ssize_t)size;
    *p = end;
    return 1;
}

/* plain_values_py's twin: the values of a section of `count` plain metadata records
 * (each at the batch's base timestamp and offset, in order, with a null key, a value
 * that is not empty and no header), or None where any record is otherwise or the
 * section is not exactly those records.  Only what decode_records reads is read here. */
static PyObject *py_plain_values(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, count;
    long long base_offset;
    if (!PyArg_ParseTuple(args, "y*nnL", &view, &start, &count, &base_offset)) return NULL;
    PyObject *out = NULL;
    long long last;
    if (start < 0 || start > view.len || count < 1 || count > (view.len - start) / 7 ||
        __builtin_add_overflow(base_offset, (long long)(count - 1), &last))
        goto fallback;
    const unsigned char *p = (const unsigned char *)view.buf + start,
                        *n = (const unsigned char *)view.buf + view.len;
    out = PyList_New(count);
    if (!out) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        const unsigned char *at;
        Py_ssize_t len;
        if (!plain_record(&p, n, i, &at, &len)) goto fallback;
        PyObject *value = PyBytes_FromStringAndSize((const char *)at, len);
        if (!value) goto error;
        PyList_SET_ITEM(out, i, value);
    }
    if (p != n) goto fallback;
    goto done;
fallback:
    Py_XDECREF(out);
    out = Py_None;
    Py_INCREF(out);
    goto done;
error:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&view);
    return out;
}

/* plain_span_py's twin (kmeta/formats/spans.py): the batches from `pos` on that a
 * metadata log's verify pass has nothing to say of, walked in one call.  Each is a v2
 * batch of `epoch` at offset `next`, with attributes 0, lastOffsetDelta count - 1,
 * maxTimestamp its baseTimestamp, a matching CRC-32C and a records section of at most
 * `most_section` bytes holding exactly `count` plain records (plain_values' reading).
 * The walk stops before any other batch, at a batch that would end past `limit` or whose
 * base offset is `before` or above, once `pos` reaches `stop`, and after the batch that
 * brings the values to `most_values`.
 * The values other than `skip` are kept, with their offsets and their batch's
 * position; with `tell`, each batch that has values kept is told as (position, base
 * offset, last offset, timestamp). */
static int section_plain(const unsigned char *p, const unsigned char *n, Py_ssize_t count) {
    const unsigned char *value;
    Py_ssize_t len;
    for (Py_ssize_t i = 0; i < count; i++)
        if (!plain_record(&p, n, i, &value, &len)) return 0;
    return p == n;
}

static int keep_values(const unsigned char *p, const unsigned char *n, Py_ssize_t count,
                       long long base, Py_ssize_t position, Py_buffer *skip, PyObject *values,
                       PyObject *offsets, PyObject *positions) {
    for (Py_ssize_t i = 0; i < count; i++) {
        const unsigned char *at;
        Py_ssize_t len;
        plain_record(&p, n, i, &at, &len);  /* section_plain has found each plain */
        if (len != skip->len || memcmp(at, skip->buf, (size_t)len) != 0) {
            PyObject *v = PyBytes_FromStringAndSize((const char *)at, len);
            if (!v) return 0;
            int bad = PyList_Append(values, v);
            Py_DECREF(v);
            if (bad) return 0;
            PyObject *o = PyLong_FromLongLong(base + i);
            if (!o) return 0;
            bad = PyList_Append(offsets, o);
            Py_DECREF(o);
            if (bad) return 0;
            PyObject *where = PyLong_FromSsize_t(position);
            if (!where) return 0;
            bad = PyList_Append(positions, where);
            Py_DECREF(where);
            if (bad) return 0;
        }
    }
    return 1;
}

static PyObject *py_plain_span(PyObject *self, PyObject *args) {
    Py_buffer view, skip;
    Py_ssize_t pos, limit, stop, most_section, most_values;
    long long next, epoch, before;
    int tell;
    if (!PyArg_ParseTuple(args, "y*nnnLLLy*nnp", &view, &pos, &limit, &stop, &next, &epoch,
                          &before, &skip, &most_section, &most_values, &tell))
        return NULL;
    PyObject *values = PyList_New(0), *offsets = PyList_New(0), *positions = PyList_New(0);
    PyObject *told = PyList_New(0);
    PyObject *out = NULL;
    long long newest = 0, last_ts = 0;
    Py_ssize_t batches = 0, records = 0;
    /* the records section of the last batch read whose values were all `skip` */
    const unsigned char *same = NULL;
    Py_ssize_t same_size = -1;
    int32_t same_count = -1;
    int nothing_kept = 0;
    if (!values || !offsets || !positions || !told) goto done;
    const unsigned char *buf = view.buf;
    if (limit > view.len) limit = view.len;
    while (pos >= 0 && pos < stop && pos + HEADER <= limit &&
           next < before && PyList_GET_SIZE(values) < most_values) {
        const unsigned char *b = buf + pos;
        int32_t length = be32(b + AT_LENGTH);
        Py_ssize_t size = (Py_ssize_t)length + OVERHEAD;
        if (length < HEADER - OVERHEAD || pos + size > limit || b[AT_MAGIC] != 2 ||
            be64(b + AT_BASE) != next || be32(b + AT_EPOCH) != epoch ||
            b[AT_ATTRS] != 0 || b[AT_ATTRS + 1] != 0 ||
            be64(b + AT_MAX_TS) != be64(b + AT_BASE_TS) || size - HEADER > most_section)
            break;
        int32_t delta = be32(b + AT_DELTA), count = be32(b + HEADER - 4);
        long long after;
        if (count < 1 || delta != count - 1 ||
            __builtin_add_overflow(next, (long long)count, &after))
            break;
        if (crc_impl(0, b + AT_ATTRS, (size_t)(size - AT_ATTRS)) != (uint32_t)be32(b + AT_CRC))
            break;
        long long stamp = be64(b + AT_BASE_TS);
        Py_ssize_t before_kept = PyList_GET_SIZE(values);
        /* a NoOp heartbeat's section is the one before it, byte for byte: read once */
        if (!(nothing_kept && size == same_size && count == same_count &&
              memcmp(b + HEADER, same, (size_t)(size - HEADER)) == 0)) {
            if (!section_plain(b + HEADER, b + size, count)) break;
            Py_ssize_t kept = PyList_GET_SIZE(values);
            if (!keep_values(b + HEADER, b + size, count, next, pos, &skip, values, offsets,
                             positions))
                goto done;
            nothing_kept = PyList_GET_SIZE(values) == kept;
            same = b + HEADER;
            same_size = size;
            same_count = count;
        }
        if (tell && PyList_GET_SIZE(values) > before_kept) {
            PyObject *t = Py_BuildValue("(nLLL)", pos, next, after - 1, stamp);
            if (!t || PyList_Append(told, t) < 0) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
        }
        if (batches == 0 || stamp > newest) newest = stamp;
        last_ts = stamp;
        next = after;
        batches++;
        records += count;
        pos += size;
    }
    out = Py_BuildValue("nnnLOOOLLO", pos, batches, records, next, values, offsets, positions,
                        newest, last_ts, told);
done:
    Py_XDECREF(values);
    Py_XDECREF(offsets);
    Py_XDECREF(positions);
    Py_XDECREF(told);
    PyBuffer_Release(&view);
    PyBuffer_Release(&skip);
    return out;
}

/* ------------------------------------------------------------------ bodies */

/* A message body read by a program kmeta.formats.readergen.body_program derives from the
 * schema declarations.  The generated Python reader is the reference: anything it would
 * reject (a short body, a bad length, invalid UTF-8, stray bytes) makes this reader give
 * up (NULL with no exception set) so that the Python reader says what is wrong. */

enum { OP_FIXED, OP_UUID, OP_STRING, OP_BYTES, OP_ARRAY, OP_STRUCT };

typedef struct {
    const unsigned char *buf;
    Py_ssize_t len;
} Body;

static PyObject *read_op(const Body *b, Py_ssize_t *pos, PyObject *op);
static PyObject *read_struct(const Body *b, Py_ssize_t *pos, PyObject *prog);

static int uvarint(const Body *b, Py_ssize_t *pos, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0, shift = 0; i < 5; i++, shift += 7) {
        if (*pos >= b->len) return 0;
        unsigned char c = b->buf[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (c < 0x80) { *out = v; return 1; }
    }
    return 0;
}

/* A string, bytes or array length: uvarint + 1 in flexible versions, else int16/int32. */
static int length(const Body *b, Py_ssize_t *pos, int flexible, int width, int64_t *n) {
    if (flexible) {
        uint64_t u;
        if (!uvarint(b, pos, &u)) return 0;
        *n = (int64_t)u - 1;
        return 1;
    }
    if (b->len - *pos < width) return 0;
    const unsigned char *p = b->buf + *pos;
    *n = width == 2 ? (int16_t)(uint16_t)((p[0] << 8) | p[1]) : be32(p);
    *pos += width;
    return 1;
}

static PyObject *fixed(const Body *b, Py_ssize_t *pos, long code) {
    const unsigned char *p = b->buf + *pos;
    Py_ssize_t room = b->len - *pos;
    switch (code) {
    case '?': if (room < 1) return NULL; *pos += 1; return PyBool_FromLong(p[0] != 0);
    case 'b': if (room < 1) return NULL; *pos += 1; return PyLong_FromLong((signed char)p[0]);
    case 'h': if (room < 2) return NULL; *pos += 2;
        return PyLong_FromLong((int16_t)(uint16_t)((p[0] << 8) | p[1]));
    case 'H': if (room < 2) return NULL; *pos += 2; return PyLong_FromLong((p[0] << 8) | p[1]);
    case 'i': if (room < 4) return NULL; *pos += 4; return PyLong_FromLong(be32(p));
    case 'I': if (room < 4) return NULL; *pos += 4;
        return PyLong_FromUnsignedLong((uint32_t)be32(p));
    case 'q': if (room < 8) return NULL; *pos += 8; return PyLong_FromLongLong(be64(p));
    case 'd': {
        if (room < 8) return NULL;
        *pos += 8;
        uint64_t bits = (uint64_t)be64(p);
        double d;
        memcpy(&d, &bits, sizeof d);
        return PyFloat_FromDouble(d);
    }
    }
    PyErr_Format(PyExc_ValueError, "body program: unknown fixed code %ld", code);
    return NULL;
}

static const char B64URL[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, no padding. */
static PyObject *uuid(const Body *b, Py_ssize_t *pos) {
    if (b->len - *pos < 16) return NULL;
    const unsigned char *p = b->buf + *pos;
    char text[22];
    int t = 0;
    for (int i = 0; i < 15; i += 3) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8) | p[i + 2];
        text[t++] = B64URL[v >> 18];
        text[t++] = B64URL[(v >> 12) & 63];
        text[t++] = B64URL[(v >> 6) & 63];
        text[t++] = B64URL[v & 63];
    }
    text[t++] = B64URL[p[15] >> 2];
    text[t++] = B64URL[(p[15] & 3) << 4];
    *pos += 16;
    return PyUnicode_FromStringAndSize(text, 22);
}

/* A string (kind OP_STRING) or bytes: (kind, flexible, nullable). */
static PyObject *blob_op(const Body *b, Py_ssize_t *pos, long kind, int flexible,
                         int nullable) {
    int64_t n;
    if (!length(b, pos, flexible, kind == OP_STRING ? 2 : 4, &n)) return NULL;
    if (n < 0) {
        if (!nullable) return NULL;
        Py_RETURN_NONE;
    }
    if (n > b->len - *pos) return NULL;
    const char *p = (const char *)b->buf + *pos;
    *pos += (Py_ssize_t)n;
    if (kind != OP_STRING) return PyBytes_FromStringAndSize(p, (Py_ssize_t)n);
    PyObject *s = PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
    if (!s && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) PyErr_Clear();
    return s;
}

static long op_long(PyObject *op, Py_ssize_t i) {
    return PyLong_AsLong(PyTuple_GET_ITEM(op, i));
}

static PyObject *read_op(const Body *b, Py_ssize_t *pos, PyObject *op) {
    if (!PyTuple_Check(op) || PyTuple_GET_SIZE(op) < 1) {
        PyErr_SetString(PyExc_TypeError, "body program: an op is a non-empty tuple");
        return NULL;
    }
    long kind = op_long(op, 0);
    Py_ssize_t size = PyTuple_GET_SIZE(op);
    switch (kind) {
    case OP_FIXED:
        if (size == 2) return fixed(b, pos, op_long(op, 1));
        break;
    case OP_UUID:
        return uuid(b, pos);
    case OP_STRING:
    case OP_BYTES:
        if (size == 3) return blob_op(b, pos, kind, op_long(op, 1), op_long(op, 2));
        break;
    case OP_ARRAY: {
        if (size != 4) break;
        int64_t n;
        if (!length(b, pos, op_long(op, 1), 4, &n)) return NULL;
        if (n < 0) {
            if (!op_long(op, 2)) return NULL;
            Py_RETURN_NONE;
        }
        if (n > b->len - *pos) return NULL;
        PyObject *element = PyTuple_GET_ITEM(op, 3);
        PyObject *list = PyList_New((Py_ssize_t)n);
        if (!list) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = read_op(b, pos, element);
            if (!v) { Py_DECREF(list); return NULL; }
            PyList_SET_ITEM(list, i, v);
        }
        return list;
    }
    case OP_STRUCT:
        if (size != 3) break;
        if (op_long(op, 1)) {  /* nullable: a marker byte, >= 0x80 for null */
            if (*pos >= b->len) return NULL;
            if (b->buf[(*pos)++] >= 0x80) Py_RETURN_NONE;
        }
        return read_struct(b, pos, PyTuple_GET_ITEM(op, 2));
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "body program: bad op of kind %ld", kind);
    return NULL;
}

static PyObject *unknown_tag(uint64_t tag, const Body *b, Py_ssize_t at, Py_ssize_t end) {
    PyObject *t = PyLong_FromUnsignedLongLong(tag);
    PyObject *d = PyBytes_FromStringAndSize((const char *)b->buf + at, end - at);
    PyObject *entry = (t && d) ? Py_BuildValue("{sOsO}", "tag", t, "data", d) : NULL;
    Py_XDECREF(t);
    Py_XDECREF(d);
    return entry;
}

/* The tagged section: known tags read with their op (kept unless equal to their default),
 * unknown ones kept raw under _unknownTaggedFields.  0 to give up, -1 on error. */
static int tagged(const Body *b, Py_ssize_t *pos, PyObject *table, PyObject *out) {
    if (*pos >= b->len) return 0;
    if (b->buf[*pos] == 0) { (*pos)++; return 1; }
    uint64_t count;
    if (!uvarint(b, pos, &count)) return 0;
    PyObject *unknown = NULL;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t tag, size;
        if (!uvarint(b, pos, &tag) || !uvarint(b, pos, &size)) goto give_up;
        if ((int64_t)size > b->len - *pos) goto give_up;
        Py_ssize_t end = *pos + (Py_ssize_t)size;
        PyObject *entry = NULL;
        if (table != Py_None) {
            PyObject *key = PyLong_FromUnsignedLongLong(tag);
            if (!key) goto error;
            entry = PyDict_GetItemWithError(table, key);
            Py_DECREF(key);
            if (!entry && PyErr_Occurred()) goto error;
        }
        if (!entry) {
            if (!unknown && !(unknown = PyList_New(0))) goto error;
            PyObject *u = unknown_tag(tag, b, *pos, end);
            if (!u || PyList_Append(unknown, u) < 0) { Py_XDECREF(u); goto error; }
            Py_DECREF(u);
            *pos = end;
            continue;
        }
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3) {
            PyErr_SetString(PyExc_TypeError, "body program: a tag is (name, op, default)");
            goto error;
        }
        PyObject *v = read_op(b, pos, PyTuple_GET_ITEM(entry, 1));
        if (!v) { if (PyErr_Occurred()) goto error; goto give_up; }
        if (*pos != end) { Py_DECREF(v); goto give_up; }
        int differs = PyObject_RichCompareBool(v, PyTuple_GET_ITEM(entry, 2), Py_NE);
        if (differs < 0 || (differs && PyDict_SetItem(out, PyTuple_GET_ITEM(entry, 0), v) < 0)) {
            Py_DECREF(v);
            goto error;
        }
        Py_DECREF(v);
    }
    if (unknown) {
        int r = PyDict_SetItemString(out, "_unknownTaggedFields", unknown);
        Py_DECREF(unknown);
        return r < 0 ? -1 : 1;
    }
    return 1;
give_up:
    Py_XDECREF(unknown);
    return 0;
error:
    Py_XDECREF(unknown);
    return -1;
}

/* prog: (fields, tags, flexible); fields a tuple of (name, op), tags a dict of
 * tag -> (name, op, default) or None. */
static PyObject *read_struct(const Body *b, Py_ssize_t *pos, PyObject *prog) {
    if (!PyTuple_Check(prog) || PyTuple_GET_SIZE(prog) != 3 ||
        !PyTuple_Check(PyTuple_GET_ITEM(prog, 0))) {
        PyErr_SetString(PyExc_TypeError, "body program: a struct is (fields, tags, flexible)");
        return NULL;
    }
    PyObject *fields = PyTuple_GET_ITEM(prog, 0);
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *field = PyTuple_GET_ITEM(fields, i);
        if (!PyTuple_Check(field) || PyTuple_GET_SIZE(field) != 2) {
            PyErr_SetString(PyExc_TypeError, "body program: a field is (name, op)");
            goto fail;
        }
        PyObject *v = read_op(b, pos, PyTuple_GET_ITEM(field, 1));
        if (!v) goto fail;
        int r = PyDict_SetItem(out, PyTuple_GET_ITEM(field, 0), v);
        Py_DECREF(v);
        if (r < 0) goto fail;
    }
    if (PyObject_IsTrue(PyTuple_GET_ITEM(prog, 2))) {
        int r = tagged(b, pos, PyTuple_GET_ITEM(prog, 1), out);
        if (r <= 0) goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *py_decode_body(PyObject *self, PyObject *args) {
    PyObject *prog;
    Py_buffer view;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "Oy*n", &prog, &view, &pos)) return NULL;
    Body b = {view.buf, view.len};
    PyObject *out = NULL;
    if (pos >= 0 && pos <= view.len) {
        out = read_struct(&b, &pos, prog);
        if (out && pos != view.len) Py_CLEAR(out);
    }
    PyBuffer_Release(&view);
    if (!out && !PyErr_Occurred()) Py_RETURN_NONE;
    return out;
}

/* ------------------------------------------------------------------ quiet changes */

/* The compiled twin of kmeta.ops.replay.engine.apply_changes_py: the records of a batch that
 * verify's replay process applies, decoded (kmeta.formats.payload.decode_metadata, whose
 * memo it shares) and applied to the image in one loop, as long as each is a NoOp or a
 * PartitionChangeRecord that MetadataImage.apply_quiet takes.  At the first other record
 * it stops, the image untouched by that record, and returns its index and payload: the
 * Python path applies it and says what is wrong, the one home of every problem's text.
 * Whatever this code does not expect (a type, a missing key, an error) is such a record. */

static PyObject *S_NO_OP, *S_CHANGE, *S_PARTITION, *S_TOPIC_ID, *S_PARTITION_ID, *S_ISR,
    *S_LEADER, *S_LEADER_EPOCH, *S_PARTITION_EPOCH, *S_REPLICAS, *S_PARTITIONS, *S_TOPICS,
    *S_BROKERS, *S_CHANGED, *S_REMOVING, *S_ADDING, *S_RECOVERY, *S_DIRECTORIES, *S_ELR,
    *S_LAST_ELR, *MIGRATING, *ONE, *ZERO, *MINUS_ONE;

static int quiet_init(void) {
    const char *names[] = {"NO_OP_RECORD", "PARTITION_CHANGE_RECORD", "PARTITION_RECORD",
                           "topicId", "partitionId", "isr", "leader", "leaderEpoch",
                           "partitionEpoch", "replicas", "partitions", "topics", "brokers",
                           "changed_partition", "removingReplicas", "addingReplicas",
                           "leaderRecoveryState", "directories", "eligibleLeaderReplicas",
                           "lastKnownElr",
                           /* kmeta.core.image.MIGRATING_DIR: Kafka's DirectoryId.MIGRATING */
                           "AAAAAAAAAAAAAAAAAAAAAA"};
    PyObject **slots[] = {&S_NO_OP, &S_CHANGE, &S_PARTITION, &S_TOPIC_ID, &S_PARTITION_ID,
                          &S_ISR, &S_LEADER, &S_LEADER_EPOCH, &S_PARTITION_EPOCH,
                          &S_REPLICAS, &S_PARTITIONS, &S_TOPICS, &S_BROKERS, &S_CHANGED,
                          &S_REMOVING, &S_ADDING, &S_RECOVERY, &S_DIRECTORIES, &S_ELR,
                          &S_LAST_ELR, &MIGRATING};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*slots[i] = PyUnicode_InternFromString(names[i]))) return -1;
    ONE = PyLong_FromLong(1);
    ZERO = PyLong_FromLong(0);
    MINUS_ONE = PyLong_FromLong(-1);
    return ONE && ZERO && MINUS_ONE ? 0 : -1;
}

/* d[key] (borrowed), or NULL for a missing key and for any error (cleared): a lookup
 * that fails sends the record to the Python path, which meets the same failure. */
static PyObject *lookup(PyObject *d, PyObject *key) {
    if (!PyDict_CheckExact(d)) return NULL;
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (!v) PyErr_Clear();
    return v;
}

/* An exact int's value in *out, 0 for anything else (a bool, a big int, another type). */
static int small_int(PyObject *v, long *out) {
    if (!v || !PyLong_CheckExact(v)) return 0;
    int overflow;
    *out = PyLong_AsLongAndOverflow(v, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
    return 1;
}

/* A list of exact ints, its values in a buffer of *n (grown when needed): 0 otherwise. */
static int int_list(PyObject *list, long **buf, Py_ssize_t *cap, Py_ssize_t *n) {
    if (!list || !PyList_CheckExact(list)) return 0;
    *n = PyList_GET_SIZE(list);
    if (*n > *cap) {
        long *grown = PyMem_Realloc(*buf, (size_t)*n * sizeof(long));
        if (!grown) { PyErr_Clear(); return 0; }
        *buf = grown;
        *cap = *n;
    }
    for (Py_ssize_t i = 0; i < *n; i++)
        if (!small_int(PyList_GET_ITEM(list, i), *buf + i)) return 0;
    return 1;
}

static int has(const long *xs, Py_ssize_t n, long x) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (xs[i] == x) return 1;
    return 0;
}

typedef struct {
    long *isr, *replicas;
    Py_ssize_t isr_cap, replicas_cap;
    /* the partition before and after the last change applied: the image's
     * changed_partition, set once a call (nothing reads it between two records) */
    PyObject *old, *p;
} Scratch;

/* MetadataImage.apply_quiet on a record's fields (NULL: absent): 1 applied, 0 not taken
 * (the image untouched), -1 error.  ``fresh``: isr is a list of this call's own, kept. */
static int quiet_change(PyObject *topics, PyObject *brokers, PyObject *tid, PyObject *pid,
                        PyObject *isr, PyObject *leader, int fresh, Scratch *s) {
    PyObject *topic = lookup(topics, tid);
    PyObject *parts = topic ? lookup(topic, S_PARTITIONS) : NULL;
    PyObject *old = parts ? lookup(parts, pid) : NULL;
    if (!old || !PyDict_CheckExact(old)) return 0;
    int new_isr = isr != NULL && isr != Py_None;
    if (!new_isr) isr = lookup(old, S_ISR);
    Py_ssize_t n_isr, n_replicas;
    if (!int_list(isr, &s->isr, &s->isr_cap, &n_isr)) return 0;
    long lead, no_change = -2;
    int elected = 0;
    PyObject *leader_epoch = NULL;
    if (leader) {
        if (!small_int(leader, &lead)) return 0;
        elected = lead != no_change;
    }
    if (elected) {
        leader_epoch = lookup(old, S_LEADER_EPOCH);
        if (!leader_epoch || !PyLong_CheckExact(leader_epoch)) return 0;
    } else if (!small_int(lookup(old, S_LEADER), &lead)) {
        return 0;
    }
    PyObject *partition_epoch = lookup(old, S_PARTITION_EPOCH);
    if (!partition_epoch || !PyLong_CheckExact(partition_epoch)) return 0;
    /* the checks of _partition_change_fast, each of which would raise a problem */
    if (lead >= 0 && !has(s->isr, n_isr, lead)) return 0;
    if (!int_list(lookup(old, S_REPLICAS), &s->replicas, &s->replicas_cap, &n_replicas))
        return 0;
    for (Py_ssize_t i = 0; i < n_isr; i++)
        if (!has(s->replicas, n_replicas, s->isr[i])) return 0;
    if (elected && lead >= 0) {
        int known = PyDict_CheckExact(brokers) ? PyDict_Contains(brokers, leader) : -1;
        if (known <= 0) { PyErr_Clear(); return 0; }
    }
    /* taken: the partition after the record, made as the Python path makes it */
    PyObject *p = PyDict_Copy(old), *copy = NULL, *epoch = NULL;
    if (!p) return -1;
    if (new_isr && (!(copy = fresh ? Py_NewRef(isr) : PyList_GetSlice(isr, 0, n_isr)) ||
                    PyDict_SetItem(p, S_ISR, copy) < 0))
        goto fail;
    if (elected) {
        if (PyDict_SetItem(p, S_LEADER, leader) < 0 ||
            !(epoch = PyNumber_Add(leader_epoch, ONE)) ||
            PyDict_SetItem(p, S_LEADER_EPOCH, epoch) < 0)
            goto fail;
        Py_CLEAR(epoch);
    }
    if (!(epoch = PyNumber_Add(partition_epoch, ONE)) ||
        PyDict_SetItem(p, S_PARTITION_EPOCH, epoch) < 0)
        goto fail;
    Py_XSETREF(s->old, Py_NewRef(old));  /* before the image lets go of it */
    if (PyDict_SetItem(parts, pid, p) < 0) goto fail;
    Py_XDECREF(copy);
    Py_DECREF(epoch);
    Py_XSETREF(s->p, p);
    return 1;
fail:
    Py_XDECREF(copy);
    Py_XDECREF(epoch);
    Py_DECREF(p);
    return -1;
}

/* quiet_change on a decoded record's data: only topicId, partitionId, isr and leader. */
static int quiet_data(PyObject *topics, PyObject *brokers, PyObject *d, Scratch *s) {
    if (!PyDict_CheckExact(d) || PyDict_GET_SIZE(d) > 4) return 0;
    PyObject *tid = lookup(d, S_TOPIC_ID), *pid = lookup(d, S_PARTITION_ID);
    if (!tid || !pid) return 0;
    PyObject *isr = lookup(d, S_ISR), *leader = lookup(d, S_LEADER);
    if (2 + (isr != NULL) + (leader != NULL) != PyDict_GET_SIZE(d)) return 0;
    return quiet_change(topics, brokers, tid, pid, isr, leader, 0, s);
}

/* d.get(key) (borrowed; ``fallback`` when absent), NULL with no error for an error. */
static PyObject *get(PyObject *d, PyObject *key, PyObject *fallback) {
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v) return v;
    if (PyErr_Occurred()) { PyErr_Clear(); return NULL; }
    return fallback;
}

/* _ints(v): a copy of a list, [] for None; NULL (no error) for anything else. */
static PyObject *ints_copy(PyObject *v) {
    if (v == Py_None) return PyList_New(0);
    if (!v || !PyList_CheckExact(v)) return NULL;
    return PyList_GetSlice(v, 0, PyList_GET_SIZE(v));
}

/* MetadataImage._quiet_partition: a PartitionRecord's fields ``d`` applied where they
 * raise no problem (kmeta.core.image._partition otherwise).  1, 0 or -1 as quiet_change. */
static int quiet_partition(PyObject *topics, PyObject *brokers, PyObject *d, Scratch *s) {
    if (!PyDict_CheckExact(d)) return 0;
    PyObject *tid = lookup(d, S_TOPIC_ID), *pid = lookup(d, S_PARTITION_ID);
    PyObject *replicas = lookup(d, S_REPLICAS), *isr = lookup(d, S_ISR);
    PyObject *topic = tid ? lookup(topics, tid) : NULL;
    PyObject *parts = topic ? lookup(topic, S_PARTITIONS) : NULL;
    if (!parts || !pid || !PyDict_CheckExact(parts)) return 0;
    Py_ssize_t n_isr, n_replicas;
    if (!int_list(isr, &s->isr, &s->isr_cap, &n_isr) ||
        !int_list(replicas, &s->replicas, &s->replicas_cap, &n_replicas))
        return 0;
    PyObject *lists[4], *keys[4] = {S_REMOVING, S_ADDING, S_ELR, S_LAST_ELR};
    for (int k = 0; k < 4; k++) {
        lists[k] = get(d, keys[k], Py_None);
        if (!lists[k] || (lists[k] != Py_None && !PyList_CheckExact(lists[k]))) return 0;
    }
    PyObject *dirs = get(d, S_DIRECTORIES, Py_None);
    if (!dirs || (dirs != Py_None && !PyList_CheckExact(dirs))) return 0;
    Py_ssize_t n_dirs = dirs == Py_None ? 0 : PyList_GET_SIZE(dirs);
    if (n_dirs && n_dirs != n_replicas) return 0;
    PyObject *recovery = get(d, S_RECOVERY, ZERO), *leader = get(d, S_LEADER, MINUS_ONE);
    PyObject *epoch = get(d, S_LEADER_EPOCH, MINUS_ONE);
    PyObject *partition_epoch = get(d, S_PARTITION_EPOCH, MINUS_ONE);
    long lrs, lead, e, pe, old_e, old_pe;
    if (!small_int(recovery, &lrs) || (lrs != 0 && lrs != 1) || !small_int(leader, &lead) ||
        !small_int(epoch, &e) || !small_int(partition_epoch, &pe))
        return 0;
    PyObject *old = PyDict_GetItemWithError(parts, pid);
    if (!old && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    if (old && (!PyDict_CheckExact(old) || !small_int(lookup(old, S_LEADER_EPOCH), &old_e) ||
                !small_int(lookup(old, S_PARTITION_EPOCH), &old_pe) || e < old_e ||
                pe < old_pe))
        return 0;
    if (lead >= 0 && !has(s->isr, n_isr, lead)) return 0;
    for (Py_ssize_t i = 0; i < n_isr; i++)
        if (!has(s->replicas, n_replicas, s->isr[i])) return 0;
    if (lead >= 0) {
        int known = PyDict_CheckExact(brokers) ? PyDict_Contains(brokers, leader) : -1;
        if (known <= 0) { PyErr_Clear(); return 0; }
    }
    /* _default_to_migrating: no directories, or only MIGRATING ones, is MIGRATING each */
    Py_ssize_t migrating = 0;
    for (Py_ssize_t i = 0; i < n_dirs; i++) {
        int same = PyObject_RichCompareBool(PyList_GET_ITEM(dirs, i), MIGRATING, Py_EQ);
        if (same < 0) return -1;
        migrating += same;
    }
    /* taken: the partition as _partition makes it, its keys in the same order */
    PyObject *values[11] = {NULL};
    PyObject *names[11] = {S_REPLICAS, S_ISR, S_REMOVING, S_ADDING, S_LEADER, S_RECOVERY,
                           S_LEADER_EPOCH, S_PARTITION_EPOCH, S_DIRECTORIES, S_ELR,
                           S_LAST_ELR};
    int r = -1;
    PyObject *p = PyDict_New();
    if (!p) return -1;
    values[0] = PyList_GetSlice(replicas, 0, n_replicas);
    values[1] = PyList_GetSlice(isr, 0, n_isr);
    values[2] = ints_copy(lists[0]);
    values[3] = ints_copy(lists[1]);
    values[4] = Py_NewRef(leader);
    values[5] = Py_NewRef(recovery);
    values[6] = Py_NewRef(epoch);
    values[7] = Py_NewRef(partition_epoch);
    if (n_dirs == 0 || migrating == n_dirs) {
        if ((values[8] = PyList_New(n_replicas)))
            for (Py_ssize_t i = 0; i < n_replicas; i++)
                PyList_SET_ITEM(values[8], i, Py_NewRef(MIGRATING));
    } else {
        values[8] = PyList_GetSlice(dirs, 0, n_dirs);
    }
    values[9] = ints_copy(lists[2]);
    values[10] = ints_copy(lists[3]);
    for (int k = 0; k < 11; k++)
        if (!values[k] || PyDict_SetItem(p, names[k], values[k]) < 0) goto out;
    r = PyDict_SetItem(parts, pid, p) < 0 ? -1 : 1;
out:
    for (int k = 0; k < 11; k++) Py_XDECREF(values[k]);
    Py_DECREF(p);
    return r;
}

/* The text of the topic id at ``at`` (Kafka's Uuid.toString, as uuid() makes it), from
 * a small cache of the ids met last: a log's changes name a few hundred topics over and
 * over, and a text met before has its hash made already for the topics' lookup. */
#define TOPIC_CACHE 256
static unsigned char topic_ids[TOPIC_CACHE][16];
static PyObject *topic_texts[TOPIC_CACHE];

static PyObject *topic_text(const Body *b, Py_ssize_t at) {
    const unsigned char *id = b->buf + at;
    uint64_t h;
    memcpy(&h, id, 8);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    unsigned slot = (unsigned)(h >> 56) % TOPIC_CACHE;
    if (topic_texts[slot] && memcmp(topic_ids[slot], id, 16) == 0)
        return Py_NewRef(topic_texts[slot]);
    PyObject *text = uuid(b, &at);
    if (text) {
        Py_XSETREF(topic_texts[slot], Py_NewRef(text));
        memcpy(topic_ids[slot], id, 16);
    }
    return text;
}

/* The fields of a PartitionChangeRecord value read straight from its bytes, where the
 * body is partitionId, topicId and at most the tagged isr (tag 0) and leader (tag 1), in
 * that order, each once: the layout of the versions kmeta.formats.payload.DECODER names
 * (derived from the same body programs).  The values are the ones decode_metadata's
 * data would hold (a leader of -2, the default, absent; a null ISR absent), without the
 * dict, the payload and the memo of a decoding: most of the records of a busy log are
 * these, each met once.  1 read (new references), 0 for anything else (the general
 * decoding reads it), -1 error. */
static int change_fields(const unsigned char *buf, Py_ssize_t len, PyObject **tid,
                         PyObject **pid, PyObject **isr, PyObject **leader) {
    Body b = {buf, len};
    Py_ssize_t pos = 23, isr_at = 0;
    uint64_t count, tag, size;
    int64_t n_isr = -1;
    long lead = -2, last = -1;
    if (len < 24 || !uvarint(&b, &pos, &count) || count > 2) return 0;
    for (uint64_t i = 0; i < count; i++) {
        if (!uvarint(&b, &pos, &tag) || !uvarint(&b, &pos, &size) || tag > 1 ||
            (long)tag <= last || (int64_t)size > len - pos)
            return 0;
        last = (long)tag;
        Py_ssize_t end = pos + (Py_ssize_t)size;
        if (tag == 0) {
            uint64_t u;
            if (!uvarint(&b, &pos, &u) || u > (uint64_t)(end - pos) / 4 + 1 ||
                (u > 0 && (int64_t)(u - 1) * 4 != end - pos) || (u == 0 && pos != end))
                return 0;
            n_isr = (int64_t)u - 1;
            isr_at = pos;
        } else {
            if (size != 4) return 0;
            lead = be32(buf + pos);
        }
        pos = end;
    }
    if (pos != len) return 0;
    *tid = topic_text(&b, 7);
    *pid = PyLong_FromLong(be32(buf + 3));
    *isr = NULL;
    *leader = lead == -2 ? NULL : PyLong_FromLong(lead);
    if (*tid && *pid && (lead == -2 || *leader) && n_isr >= 0 && (*isr = PyList_New(n_isr)))
        for (int64_t i = 0; i < n_isr; i++) {
            PyObject *r = PyLong_FromLong(be32(buf + isr_at + 4 * i));
            if (!r) { Py_CLEAR(*isr); break; }
            PyList_SET_ITEM(*isr, i, r);
        }
    if (*tid && *pid && (lead == -2 || *leader) && (n_isr < 0 || *isr)) return 1;
    Py_CLEAR(*tid);
    Py_CLEAR(*pid);
    Py_CLEAR(*isr);
    Py_CLEAR(*leader);
    return -1;
}

/* decode_metadata(value) (a new reference), the memo ``memo`` and ``decoder`` its state:
 * (decode_metadata, NOOP_VALUE, the NoOp payload, the programs by apiKey * 256 + version,
 * what fills that table, Payload, the memo's limit, the longest value memoised).  Values
 * in the one layout Kafka writes are read here; the others by decode_metadata itself. */
static PyObject *decode_value(PyObject *value, PyObject *memo, PyObject *decoder) {
    PyObject *decode = PyTuple_GET_ITEM(decoder, 0);
    if (!PyBytes_CheckExact(value) || !PyDict_CheckExact(memo))
        return PyObject_CallOneArg(decode, value);
    PyObject *noop = PyTuple_GET_ITEM(decoder, 1);
    Py_ssize_t len = PyBytes_GET_SIZE(value);
    const unsigned char *buf = (const unsigned char *)PyBytes_AS_STRING(value);
    if (PyBytes_CheckExact(noop) && len == PyBytes_GET_SIZE(noop) &&
        memcmp(buf, PyBytes_AS_STRING(noop), (size_t)len) == 0)
        return Py_NewRef(PyTuple_GET_ITEM(decoder, 2));
    PyObject *payload = PyDict_GetItemWithError(memo, value);
    if (payload) return Py_NewRef(payload);
    if (PyErr_Occurred()) return NULL;
    if (len <= 3 || buf[0] != 1 || buf[1] >= 0x80 || buf[2] >= 0x80)
        return PyObject_CallOneArg(decode, value);
    PyObject *key = PyLong_FromLong(buf[1] * 256 + buf[2]);
    if (!key) return NULL;
    PyObject *entry = PyDict_GetItemWithError(PyTuple_GET_ITEM(decoder, 3), key);
    Py_DECREF(key);
    if (entry) {
        Py_INCREF(entry);
    } else {
        if (PyErr_Occurred()) return NULL;
        entry = PyObject_CallFunction(PyTuple_GET_ITEM(decoder, 4), "ii", buf[1], buf[2]);
        if (!entry) return NULL;
    }
    PyObject *data = NULL;
    if (PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 2) {
        Body b = {buf, len};
        Py_ssize_t pos = 3;
        data = read_struct(&b, &pos, PyTuple_GET_ITEM(entry, 1));
        if (data && pos != len) Py_CLEAR(data);
    }
    if (!data) {  /* a value the Python reader decodes or says what is wrong with */
        Py_DECREF(entry);
        return PyErr_Occurred() ? NULL : PyObject_CallOneArg(decode, value);
    }
    /* Payload(type name, version, data, None, apiKey), redacted () (no byte masked): a
     * NamedTuple made as tuple.__new__ makes one of a tuple subclass */
    PyTypeObject *type = (PyTypeObject *)PyTuple_GET_ITEM(decoder, 5);
    payload = type->tp_alloc(type, 6);
    PyObject *api = PyLong_FromLong(buf[1]), *version = PyLong_FromLong(buf[2]);
    PyObject *unmasked = PyTuple_New(0);
    if (!payload || !api || !version || !unmasked) {
        Py_XDECREF(payload);
        Py_XDECREF(api);
        Py_XDECREF(version);
        Py_XDECREF(unmasked);
        Py_DECREF(data);
        Py_DECREF(entry);
        return NULL;
    }
    PyTuple_SET_ITEM(payload, 0, Py_NewRef(PyTuple_GET_ITEM(entry, 0)));
    PyTuple_SET_ITEM(payload, 1, version);
    PyTuple_SET_ITEM(payload, 2, data);
    PyTuple_SET_ITEM(payload, 3, Py_NewRef(Py_None));
    PyTuple_SET_ITEM(payload, 4, api);
    PyTuple_SET_ITEM(payload, 5, unmasked);
    Py_DECREF(entry);
    if (len <= PyLong_AsSsize_t(PyTuple_GET_ITEM(decoder, 7))) {
        if (PyDict_GET_SIZE(memo) >= PyLong_AsSsize_t(PyTuple_GET_ITEM(decoder, 6)))
            PyDict_Clear(memo);
        if (PyErr_Occurred() || PyDict_SetItem(memo, value, payload) < 0) {
            Py_DECREF(payload);
            return NULL;
        }
    }
    return payload;
}

static int same_name(PyObject *a, PyObject *b) {
    return a == b || (PyUnicode_CheckExact(a) && PyUnicode_Compare(a, b) == 0);
}

/* A record at ``offset`` the quick path may take: at or after ``start``, of a version
 * the log's metadata.version allows (apiKey * 256 + version not in ``blocked``).  -1 for
 * an error of memory, else errors are cleared: no. */
static int allowed(PyObject *offset, long long start, PyObject *blocked, long api,
                   PyObject *version_obj) {
    int overflow;
    long version;
    if (!PyLong_CheckExact(offset) || !small_int(version_obj, &version)) return 0;
    long long at = PyLong_AsLongLongAndOverflow(offset, &overflow);
    if (overflow || at < start) { PyErr_Clear(); return 0; }
    PyObject *key = PyLong_FromLong(api * 256 + version);
    if (!key) return -1;
    int refused = PySet_Contains(blocked, key);
    Py_DECREF(key);
    if (refused != 0) { PyErr_Clear(); return 0; }
    return 1;
}

#define DECODER_SIZE 10

static int decoder_ok(PyObject *d) {
    return PyTuple_Check(d) && PyTuple_GET_SIZE(d) == DECODER_SIZE &&
           PyType_Check(PyTuple_GET_ITEM(d, 5)) &&
           PyType_IsSubtype((PyTypeObject *)PyTuple_GET_ITEM(d, 5), &PyTuple_Type) &&
           PyLong_Check(PyTuple_GET_ITEM(d, 8)) && PyLong_Check(PyTuple_GET_ITEM(d, 9));
}

/* apply_changes(values, offsets, i, image, start, blocked, skip_noops, memo, decoder) ->
 * (index of the first record not applied, its payload), (len(values), None) at the end.
 * blocked: the PartitionChangeRecord versions the log's metadata.version does not allow. */
/* (offset, old, new) appended to `applied` (None, None for a record that is not a
 * change); -1 with an exception set when it cannot be. */
/* counts[node][which] += 1, the node's [0, 0, 0] made on first use. */
static int bump(PyObject *counts, PyObject *node, int which) {
    PyObject *c = PyDict_GetItemWithError(counts, node);
    if (!c) {
        if (PyErr_Occurred()) return -1;
        if (!(c = PyList_New(3))) return -1;
        for (int k = 0; k < 3; k++) PyList_SET_ITEM(c, k, Py_NewRef(k == which ? ONE : ZERO));
        int r = PyDict_SetItem(counts, node, c);
        Py_DECREF(c);
        return r;
    }
    if (!PyList_CheckExact(c) || PyList_GET_SIZE(c) != 3) {
        PyErr_SetString(PyExc_TypeError, "apply_changes: a node's moves are a list of 3");
        return -1;
    }
    PyObject *more = PyNumber_Add(PyList_GET_ITEM(c, which), ONE);
    if (!more) return -1;
    PyList_SetItem(c, which, more);  /* steals more */
    return 0;
}

/* kmeta.core.lifecycle.count_moves, for a watch: moves[0] = the offset of the last record
 * applied; a PartitionChangeRecord's (old and new: the partition before and after) ISR
 * departures and leadership moves counted per node into moves[1]. */
static int tell_moves(PyObject *moves, PyObject *offset, PyObject *old, PyObject *new) {
    if (PyList_SetItem(moves, 0, Py_NewRef(offset)) < 0) return -1;
    if (!old) return 0;
    PyObject *counts = PyList_GET_ITEM(moves, 1);
    PyObject *before = lookup(old, S_ISR), *after = lookup(new, S_ISR);
    PyObject *lb = lookup(old, S_LEADER), *la = lookup(new, S_LEADER);
    long b, a;
    if (!PyDict_CheckExact(counts) || !before || !after || !PyList_CheckExact(before) ||
        !small_int(lb, &b) || !small_int(la, &a)) {
        PyErr_SetString(PyExc_TypeError, "apply_changes: a change without its isr or leader");
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(before); k++) {
        PyObject *node = PyList_GET_ITEM(before, k);
        int in = PySequence_Contains(after, node);
        if (in < 0 || (!in && bump(counts, node, 0) < 0)) return -1;
    }
    if (b != a) {
        if (b >= 0 && bump(counts, lb, 1) < 0) return -1;
        if (a >= 0 && bump(counts, la, 2) < 0) return -1;
    }
    return 0;
}

static PyObject *py_apply_changes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if ((nargs != 9 && nargs != 10) || !(PyList_Check(args[0]) || PyTuple_Check(args[0])) ||
        !(PyList_Check(args[1]) || PyTuple_Check(args[1])) ||
        !PyAnySet_Check(args[5]) || !decoder_ok(args[8])) {
        PyErr_SetString(PyExc_TypeError, "apply_changes(values: list, offsets: list, i, "
                        "image, start, blocked: set, skip_noops, memo, decoder: tuple"
                        "[, applied: list])");
        return NULL;
    }
    /* applied: given, [the offset of the last record applied, node -> moves (see
     * tell_moves), gate], for a watch; the moves are counted only where a value of the
     * list is a record whose api key is in the gate's mask (or one the mask cannot say:
     * a key of 64 or more, a value that is not a framed record) */
    PyObject *applied = nargs == 10 && args[9] != Py_None ? args[9] : NULL;
    if (applied && (!PyList_CheckExact(applied) || PyList_GET_SIZE(applied) != 3 ||
                    !PyDict_CheckExact(PyList_GET_ITEM(applied, 1)))) {
        PyErr_SetString(PyExc_TypeError, "apply_changes: applied is [offset, dict, gate]");
        return NULL;
    }
    int counting = 0;
    if (applied) {
        unsigned long long gate = PyLong_AsUnsignedLongLongMask(PyList_GET_ITEM(applied, 2));
        if (PyErr_Occurred()) return NULL;
        Py_ssize_t all = PySequence_Fast_GET_SIZE(args[0]);
        for (Py_ssize_t k = 0; k < all && !counting; k++) {
            PyObject *v = PySequence_Fast_GET_ITEM(args[0], k);
            if (!PyBytes_CheckExact(v) || PyBytes_GET_SIZE(v) < 2) {
                counting = 1;
                break;
            }
            unsigned char key = (unsigned char)PyBytes_AS_STRING(v)[1];
            counting = key >= 64 || (gate >> key) & 1;
        }
    }
    PyObject *values = args[0], *offsets = args[1], *image = args[3];
    PyObject *memo = args[7], *decoder = args[8], *blocked = args[5];
    Py_ssize_t i = PyLong_AsSsize_t(args[2]), n = PySequence_Fast_GET_SIZE(values);
    long long start = PyLong_AsLongLong(args[4]);
    int skip_noops = PyObject_IsTrue(args[6]);
    long change_api = PyLong_AsLong(PyTuple_GET_ITEM(decoder, 8));
    unsigned long long readable = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(decoder, 9));
    if (PyErr_Occurred() || skip_noops < 0) return NULL;
    if (PySequence_Fast_GET_SIZE(offsets) != n || i < 0) {
        PyErr_SetString(PyExc_ValueError, "apply_changes: as many offsets as values");
        return NULL;
    }
    PyObject *topics = PyObject_GetAttr(image, S_TOPICS);
    PyObject *brokers = topics ? PyObject_GetAttr(image, S_BROKERS) : NULL;
    PyObject *last = NULL, *payload = NULL, *result = NULL;
    Scratch s = {NULL, NULL, 0, 0, NULL, NULL};
    if (!brokers) goto done;
    for (; i < n; i++) {
        PyObject *value = PySequence_Fast_GET_ITEM(values, i);
        PyObject *offset = PySequence_Fast_GET_ITEM(offsets, i);
        if (PyBytes_CheckExact(value) && PyBytes_GET_SIZE(value) >= 24) {
            const unsigned char *buf = (const unsigned char *)PyBytes_AS_STRING(value);
            PyObject *version = NULL;
            int quick = buf[0] == 1 && buf[1] == change_api && buf[2] < 64 &&
                        (readable >> buf[2]) & 1 && (version = PyLong_FromLong(buf[2]));
            if (quick) quick = allowed(offset, start, blocked, change_api, version);
            Py_XDECREF(version);
            if (quick < 0 || PyErr_Occurred()) goto done;
            if (quick) {
                PyObject *tid, *pid, *isr, *leader;
                int r = change_fields(buf, PyBytes_GET_SIZE(value), &tid, &pid, &isr, &leader);
                if (r < 0) goto done;
                if (r > 0) {
                    r = quiet_change(topics, brokers, tid, pid, isr, leader, 1, &s);
                    Py_DECREF(tid);
                    Py_DECREF(pid);
                    Py_XDECREF(isr);
                    Py_XDECREF(leader);
                    if (r < 0) goto done;
                    if (r > 0) {
                        if (applied && tell_moves(applied, offset, counting ? s.old : NULL, s.p) < 0)
                            goto done;
                        continue;
                    }
                }
            }
        }
        if (value != last || !payload) {
            Py_XDECREF(payload);
            last = value;
            if (!(payload = decode_value(value, memo, decoder))) goto done;
        }
        if (!PyTuple_Check(payload) || PyTuple_GET_SIZE(payload) < 4 ||
            PyTuple_GET_ITEM(payload, 3) != Py_None)
            break;
        PyObject *type = PyTuple_GET_ITEM(payload, 0);
        if (same_name(type, S_NO_OP)) {
            if (skip_noops) continue;
            break;
        }
        int change = same_name(type, S_CHANGE);
        long api;
        if ((!change && !same_name(type, S_PARTITION)) || PyTuple_GET_SIZE(payload) < 5 ||
            !small_int(PyTuple_GET_ITEM(payload, 4), &api))
            break;
        int r = allowed(offset, start, blocked, api, PyTuple_GET_ITEM(payload, 1));
        if (r < 0) goto done;
        if (r == 0) break;
        r = change ? quiet_data(topics, brokers, PyTuple_GET_ITEM(payload, 2), &s)
                   : quiet_partition(topics, brokers, PyTuple_GET_ITEM(payload, 2), &s);
        if (r < 0) goto done;
        if (r == 0) break;
        if (applied && tell_moves(applied, offset, change && counting ? s.old : NULL,
                                  change ? s.p : NULL) < 0)
            goto done;
    }
    if (i >= n) {
        Py_CLEAR(payload);
        result = Py_BuildValue("nO", n, Py_None);
    } else {
        result = Py_BuildValue("nO", i, payload);
    }
done:
    if (s.p && result) {  /* as the Python path leaves it: the last change applied */
        PyObject *changed = PyTuple_Pack(2, s.old, s.p);
        if (!changed || PyObject_SetAttr(image, S_CHANGED, changed) < 0) Py_CLEAR(result);
        Py_XDECREF(changed);
    }
    Py_XDECREF(s.old);
    Py_XDECREF(s.p);
    Py_XDECREF(payload);
    Py_XDECREF(topics);
    Py_XDECREF(brokers);
    PyMem_Free(s.isr);
    PyMem_Free(s.replicas);
    return result;
}

/* The decoding of apply_changes alone, for the tests: decode_value(value, memo, decoder). */
static PyObject *py_metadata_payload(PyObject *self, PyObject *const *args,
                                     Py_ssize_t nargs) {
    if (nargs != 3 || !decoder_ok(args[2])) {
        PyErr_SetString(PyExc_TypeError, "metadata_payload(value, memo, decoder: tuple)");
        return NULL;
    }
    return decode_value(args[0], args[1], args[2]);
}

/* ------------------------------------------------------------------ record lines */

/* One plain record's line, as record_lines_py in kmeta/render/jsonl.py reads it. */
typedef struct {
    long long offset, timestamp;
    PyObject *text;   /* the payload's JSON text (a str, owned) */
    const char *utf8;
    Py_ssize_t len;
} RecordLine;

/* 1: the int64 of a Python int; 0: not an int, or out of range (no error set). */
static int int64_of(PyObject *v, long long *out) {
    int overflow = 0;
    if (!PyLong_CheckExact(v)) return 0;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) return 0;
    return !(*out == -1 && PyErr_Occurred());
}

/* record_lines(first, entries, head, mid, texts, payload_text): a v2 batch's record
 * lines as UTF-8, after ``first`` (bytes, or None); None where an entry is not a plain
 * record or a text is not UTF-8 (see record_lines_py, the reference). */
static PyObject *py_record_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || (args[0] != Py_None && !PyBytes_Check(args[0])) ||
        !PyList_Check(args[1]) || !PyBytes_Check(args[2]) || !PyBytes_Check(args[3]) ||
        !PyDict_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "record_lines(first: bytes | None, entries: list, "
                        "head: bytes, mid: bytes, texts: dict, payload_text)");
        return NULL;
    }
    PyObject *first = args[0], *entries = args[1], *texts = args[4], *payload_text = args[5];
    PyObject *head = args[2], *mid = args[3];
    Py_ssize_t n = PyList_GET_SIZE(entries), got = 0;
    RecordLine *lines = PyMem_Calloc((size_t)n + 1, sizeof(RecordLine));
    if (!lines) return PyErr_NoMemory();
    PyObject *result = NULL;
    int plain = 1;
    size_t total = first == Py_None ? 0 : (size_t)PyBytes_GET_SIZE(first);
    /* a payload's text may be made by payload_text, which runs Python code: the list is
     * read again at each step and its items held while they are read */
    for (Py_ssize_t i = 0; plain && i < n && i < PyList_GET_SIZE(entries); i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        Py_INCREF(e);
        PyObject *r, *p;
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != 2 ||
            !PyTuple_Check(r = PyTuple_GET_ITEM(e, 0)) || PyTuple_GET_SIZE(r) < 5 ||
            !PyTuple_Check(p = PyTuple_GET_ITEM(e, 1)) || PyTuple_GET_SIZE(p) < 6) {
            plain = 0;
            Py_DECREF(e);
            break;
        }
        RecordLine *l = &lines[got];
        int headers = PyObject_IsTrue(PyTuple_GET_ITEM(r, 4));
        int redacted = headers ? headers : PyObject_IsTrue(PyTuple_GET_ITEM(p, 5));
        if (headers < 0 || redacted < 0) { Py_DECREF(e); goto done; }
        if (headers || redacted || !int64_of(PyTuple_GET_ITEM(r, 0), &l->offset) ||
            !int64_of(PyTuple_GET_ITEM(r, 1), &l->timestamp)) {
            plain = 0;
            Py_DECREF(e);
            break;
        }
        PyObject *key = PyLong_FromVoidPtr(p);
        if (!key) { Py_DECREF(e); goto done; }
        PyObject *hit = PyDict_GetItemWithError(texts, key);
        Py_DECREF(key);
        if (hit && PyTuple_Check(hit) && PyTuple_GET_SIZE(hit) == 2 &&
            PyTuple_GET_ITEM(hit, 0) == p) {
            l->text = Py_NewRef(PyTuple_GET_ITEM(hit, 1));
        } else {
            if (PyErr_Occurred()) { Py_DECREF(e); goto done; }
            l->text = PyObject_CallOneArg(payload_text, p);
            if (!l->text) { Py_DECREF(e); goto done; }
        }
        Py_DECREF(e);
        got++;
        if (!PyUnicode_Check(l->text)) {
            PyErr_SetString(PyExc_TypeError, "a payload's text must be a str");
            goto done;
        }
        l->utf8 = PyUnicode_AsUTF8AndSize(l->text, &l->len);
        if (!l->utf8) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto done;
            PyErr_Clear();  /* surrogates: the text is the writer's to encode */
            plain = 0;
            break;
        }
        /* "\n", head, offset, ',"timestamp":', timestamp, mid, text, "}" */
        total += 1 + (size_t)PyBytes_GET_SIZE(head) + 20 + 13 + 20 +
                 (size_t)PyBytes_GET_SIZE(mid) + (size_t)l->len + 1;
    }
    if (!plain || got < n) {  /* n < got cannot be; a list that shrank: not plain */
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (!result) goto done;
    char *w = PyBytes_AS_STRING(result);
    int sep = 0;
    if (first != Py_None) {
        memcpy(w, PyBytes_AS_STRING(first), (size_t)PyBytes_GET_SIZE(first));
        w += PyBytes_GET_SIZE(first);
        sep = 1;
    }
    for (Py_ssize_t i = 0; i < got; i++) {
        RecordLine *l = &lines[i];
        if (sep) *w++ = '\n';
        sep = 1;
        memcpy(w, PyBytes_AS_STRING(head), (size_t)PyBytes_GET_SIZE(head));
        w += PyBytes_GET_SIZE(head);
        w = put_int(w, l->offset);
        memcpy(w, ",\"timestamp\":", 13);
        w += 13;
        w = put_int(w, l->timestamp);
        memcpy(w, PyBytes_AS_STRING(mid), (size_t)PyBytes_GET_SIZE(mid));
        w += PyBytes_GET_SIZE(mid);
        memcpy(w, l->utf8, (size_t)l->len);
        w += l->len;
        *w++ = '}';
    }
    if (_PyBytes_Resize(&result, w - PyBytes_AS_STRING(result)) < 0) result = NULL;
done:
    for (Py_ssize_t i = 0; i < got; i++) Py_XDECREF(lines[i].text);
    PyMem_Free(lines);
    return result;
}

static PyMethodDef methods[] = {
    {"crc32c", py_crc32c, METH_VARARGS, "CRC-32C of bytes (and a starting value)."},
    {"run_length", py_run_length, METH_VARARGS,
     "How many batches after the one at pos repeat it: see kmeta.formats.runs."},
    {"walk", py_walk, METH_VARARGS,
     "Intact v2 batches walked by header and CRC: see kmeta.formats.runs.walk_py."},
    {"walk_file", py_walk_file, METH_VARARGS,
     "walk over a file read by pread into a scratch buffer: see "
     "kmeta.formats.runs.walk_file_py."},
    {"gather_int64", py_gather_int64, METH_VARARGS,
     "A big-endian int64 field of each fixed-size record, in native order: see "
     "kmeta.formats.runs."},
    {"fill", py_fill, METH_VARARGS,
     "A text template filled once per batch of a run: see kmeta.formats.runs."},
    {"decode_records", py_decode_records, METH_VARARGS,
     "The records of an uncompressed section without headers, or None for the Python "
     "reader: see kmeta.formats.batch._decode_records."},
    {"plain_values", py_plain_values, METH_VARARGS,
     "The values of a section of plain metadata records, or None: see "
     "kmeta.formats.runs.plain_values_py."},
    {"plain_span", py_plain_span, METH_VARARGS,
     "The batches a metadata log's verify pass has nothing to say of, walked at once: "
     "see kmeta.formats.spans.plain_span_py."},
    {"decode_body", py_decode_body, METH_VARARGS,
     "A message body read by its program, or None for the Python reader: see "
     "kmeta.formats.readergen.body_program."},
    {"apply_changes", (PyCFunction)(void (*)(void))py_apply_changes, METH_FASTCALL,
     "Decode and apply the records of a batch that need no word of the Python path: see "
     "kmeta.ops.replay.engine.apply_changes_py."},
    {"record_lines", (PyCFunction)(void (*)(void))py_record_lines, METH_FASTCALL,
     "A v2 batch's plain record lines as UTF-8: see kmeta.render.jsonl.record_lines_py."},
    {"metadata_payload", (PyCFunction)(void (*)(void))py_metadata_payload, METH_FASTCALL,
     "decode_metadata's compiled twin as apply_changes decodes: see "
     "kmeta.formats.payload.DECODER."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_runs", NULL, -1, methods};

PyMODINIT_FUNC PyInit__runs(void) {
    crc_init();
    if (quiet_init() < 0) return NULL;
#ifdef HAVE_HW_CRC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        zeros_init();
        crc_impl = crc_hw3;
    }
#endif
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
#ifdef HAVE_HW_CRC
    PyModule_AddStringConstant(m, "CRC", crc_impl == crc_hw3 ? "sse4.2" : "table");
#else
    PyModule_AddStringConstant(m, "CRC", "table");
#endif
    return m;
}
