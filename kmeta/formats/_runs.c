/* The compiled twin of kmeta/formats/runs.py: see that module for what each function
 * means.  Its pure-Python functions are the reference; tests/test_runs.py proves that
 * both give the same answers on every fixture, every real file and mutated bytes.
 *
 * Only what a scan does once per batch or record lives here: CRC-32C, finding how many
 * batches after one repeat it, filling a text template once per batch of such a run, and
 * the records of a plain records section (kmeta/formats/batch.py's _decode_records).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

static inline int64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return (int64_t)v;
}

static inline int32_t be32(const unsigned char *p) {
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

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

/* ------------------------------------------------------------------ templates */

typedef struct {
    const char *text;  /* a literal (UTF-8), or NULL for a field */
    Py_ssize_t len;
    Py_ssize_t at;     /* field: byte position in the batch */
    int kind;          /* field: 0 the batch's file position, 4 int32, 5 uint32, 8 int64 */
    int64_t add;
} Part;

static char *put_int(char *out, int64_t v) {
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *out++ = '-';
    while (n) *out++ = tmp[--n];
    return out;
}

static PyObject *py_fill(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count, size, first_position;
    PyObject *parts_obj, *sep_obj;
    if (!PyArg_ParseTuple(args, "y*nnnOU", &view, &count, &size, &first_position,
                          &parts_obj, &sep_obj))
        return NULL;
    PyObject *result = NULL, *parts = NULL;
    Part *spec = NULL;
    char *out = NULL;
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
        if (PyUnicode_Check(it)) {
            spec[i].text = PyUnicode_AsUTF8AndSize(it, &spec[i].len);
            if (!spec[i].text) goto done;
            literal += spec[i].len;
        } else {
            long long add;
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
    const char *sep = PyUnicode_AsUTF8AndSize(sep_obj, &sep_len);
    if (!sep) goto done;
    /* 20 digits and a sign: the longest int64 */
    size_t per = (size_t)literal + (size_t)fields * 21 + (size_t)sep_len;
    if (count && per > (size_t)PY_SSIZE_T_MAX / (size_t)count) { PyErr_NoMemory(); goto done; }
    out = PyMem_Malloc(per * (size_t)count + 1);
    if (!out) { PyErr_NoMemory(); goto done; }
    char *w = out;
    const unsigned char *buf = view.buf;
    for (Py_ssize_t k = 0; k < count; k++) {
        const unsigned char *b = buf + k * size;
        if (k) { memcpy(w, sep, (size_t)sep_len); w += sep_len; }
        for (Py_ssize_t i = 0; i < np; i++) {
            Part *p = &spec[i];
            if (p->text) {
                memcpy(w, p->text, (size_t)p->len);
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
            w = put_int(w, (int64_t)((uint64_t)v + (uint64_t)p->add));
        }
    }
    result = PyUnicode_DecodeUTF8(out, w - out, "strict");
done:
    PyMem_Free(out);
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

static PyMethodDef methods[] = {
    {"crc32c", py_crc32c, METH_VARARGS, "CRC-32C of bytes (and a starting value)."},
    {"run_length", py_run_length, METH_VARARGS,
     "How many batches after the one at pos repeat it: see kmeta.formats.runs."},
    {"fill", py_fill, METH_VARARGS,
     "A text template filled once per batch of a run: see kmeta.formats.runs."},
    {"decode_records", py_decode_records, METH_VARARGS,
     "The records of an uncompressed section without headers, or None for the Python "
     "reader: see kmeta.formats.batch._decode_records."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_runs", NULL, -1, methods};

PyMODINIT_FUNC PyInit__runs(void) {
    crc_init();
#ifdef HAVE_HW_CRC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) crc_impl = crc_hw;
#endif
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
#ifdef HAVE_HW_CRC
    PyModule_AddStringConstant(m, "CRC", crc_impl == crc_hw ? "sse4.2" : "table");
#else
    PyModule_AddStringConstant(m, "CRC", "table");
#endif
    return m;
}
