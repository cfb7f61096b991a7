/* epicsperf-ca: the reference runner on EPICS base's libca (docs/runners.md), and a
 * caget-like one-shot reader for the one-process-per-PV snapshot.
 *
 *   epicsperf-ca snapshot --names FILE [--timeout-ms N]
 *   epicsperf-ca monitor --names FILE [--samples N]
 *   epicsperf-ca array --names FILE [--samples N] [--check-all]
 *   epicsperf-ca array-put --names FILE --samples N --elements E --type T [--no-callback]
 *   epicsperf-ca latency --names FILE --samples N --sizes S1,S2,...
 *   epicsperf-ca get NAME [--timeout-ms N]
 *
 * Runner modes use preemptive callbacks: every channel is created at once, each get is
 * issued from its connection callback (DBR_TIME_STRING for string PVs, else
 * DBR_TIME_DOUBLE), each subscription (DBR_TIME_DOUBLE, DBE_VALUE|DBE_ALARM) is queued
 * with its channel. Samples go to one preallocated array; events are written on fd 3.
 * The array task subscribes to its one waveform from the connection callback
 * (its native TIME type, count 0 = the server's current length, DBE_VALUE|DBE_ALARM) and looks
 * at the first, middle and last elements of each update in libca's buffer; libca takes its
 * array size limit from EPICS_CA_MAX_ARRAY_BYTES in the environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cadef.h>
#include <epicsEvent.h>
#include <epicsMutex.h>
#include <epicsVersion.h>

#define EVENTS_FD 3
#define SAMPLE_BYTES 32

static epicsMutexId out_lock;

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double stamp_seconds(const epicsTimeStamp *s) {
    return (double)s->secPastEpoch + POSIX_TIME_AT_EPICS_EPOCH + s->nsec * 1e-9;
}

static void write_all(const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(EVENTS_FD, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            _exit(1); /* the orchestrator is gone */
        }
        p += n;
        len -= (size_t)n;
    }
}

/* One JSON event line, then `payload` when given (its length is in the line). */
static void emit(const char *line, const void *payload, size_t len) {
    epicsMutexMustLock(out_lock);
    write_all(line, strlen(line));
    if (payload) write_all(payload, len);
    epicsMutexUnlock(out_lock);
}

static void fail(int code, const char *fmt, ...) {
    char msg[512], line[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = ' ';
    snprintf(line, sizeof line, "{\"ev\":\"error\",\"message\":\"%s\"}\n", msg);
    if (out_lock) emit(line, NULL, 0);
    else write_all(line, strlen(line));
    _exit(code);
}

/* Growable text buffer for the results JSON. */
typedef struct { char *p; size_t len, cap; } Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        while (cap < b->len + n + 1) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) fail(1, "out of memory");
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void buf_printf(Buf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_add(b, tmp, n < (int)sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void buf_number(Buf *b, double v) {
    if (isfinite(v)) buf_printf(b, "%.17g", v);
    else buf_add(b, "null", 4);
}

static void buf_string(Buf *b, const char *s) {
    buf_add(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { buf_add(b, "\\", 1); buf_add(b, (const char *)&c, 1); }
        else if (c < 0x20) buf_printf(b, "\\u%04x", c);
        else buf_add(b, (const char *)&c, 1);
    }
    buf_add(b, "\"", 1);
}

/* ---- names and options ---------------------------------------------------------- */

typedef struct {
    const char *mode, *names_file, *name;
    double timeout;
    long samples, elements;
    int check_all, no_callback;
    long sizes[64];
    size_t nsizes;
} Options;

static void parse_options(int argc, char **argv, Options *o) {
    o->timeout = -1.0; /* the harness passes every value a mode needs: no defaults here */
    o->samples = 0;
    o->check_all = 0;
    o->no_callback = 0;
    o->elements = 0;
    o->nsizes = 0;
    o->names_file = o->name = NULL;
    if (argc < 2) fail(2, "usage: epicsperf-ca snapshot|monitor|array --names FILE | get NAME");
    o->mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--names") && i + 1 < argc) o->names_file = argv[++i];
        else if (!strcmp(a, "--timeout-ms") && i + 1 < argc) o->timeout = atof(argv[++i]) / 1000.0;
        else if (!strcmp(a, "--samples") && i + 1 < argc) o->samples = atol(argv[++i]);
        else if (!strcmp(a, "--check-all")) o->check_all = 1;
        else if (!strcmp(a, "--no-callback")) o->no_callback = 1;
        else if (!strcmp(a, "--elements") && i + 1 < argc) o->elements = atol(argv[++i]);
        else if (!strcmp(a, "--type") && i + 1 < argc) i++; /* the channel's native type is used */
        else if (!strcmp(a, "--sizes") && i + 1 < argc) {
            char *s = argv[++i], *end;
            while (*s && o->nsizes < sizeof o->sizes / sizeof *o->sizes) {
                long v = strtol(s, &end, 10);
                if (end == s || v < 1) fail(2, "--sizes must be positive numbers, got %s", argv[i]);
                o->sizes[o->nsizes++] = v;
                s = *end == ',' ? end + 1 : end;
            }
        }
        else if (a[0] != '-' && !o->name) o->name = a;
        else fail(2, "unknown argument %s", a);
    }
    int timed = !strcmp(o->mode, "snapshot") || !strcmp(o->mode, "get");
    if (timed && o->timeout < 0) fail(2, "%s: --timeout-ms N is required", o->mode);
    if (!timed && o->samples < 1) fail(2, "%s: --samples N (at least 1) is required", o->mode);
}

static char **read_names(const char *path, size_t *count) {
    FILE *f = fopen(path, "r");
    if (!f) fail(2, "cannot read --names %s: %s", path, strerror(errno));
    size_t n = 0, cap = 1024;
    char **names = malloc(cap * sizeof *names);
    char line[4096];
    while (names && fgets(line, sizeof line, f)) {
        char *s = line, *e;
        while (*s == ' ' || *s == '\t') s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        if (!*s) continue;
        if (n == cap) names = realloc(names, (cap *= 2) * sizeof *names);
        if (names) names[n++] = strdup(s);
    }
    fclose(f);
    if (!names) fail(1, "out of memory");
    *count = n;
    return names;
}

/* Next stdin command word; EOF means the orchestrator is gone. */
static void expect_command(const char *word) {
    char line[256];
    for (;;) {
        if (!fgets(line, sizeof line, stdin)) _exit(0);
        char *s = line, *e = line + strlen(line);
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ')) *--e = 0;
        while (*s == ' ') s++;
        if (!*s) continue;
        if (strcmp(s, word)) fail(2, "expected '%s', got '%s'", word, s);
        return;
    }
}

static void emit_ready(void) {
    char line[128];
    snprintf(line, sizeof line, "{\"ev\":\"ready\",\"client\":\"c-libca\",\"version\":\"%s\"}\n",
             EPICS_VERSION_SHORT);
    emit(line, NULL, 0);
}

/* ---- snapshot ------------------------------------------------------------------- */

typedef struct {
    chid ch;
    int requested, done, ok, is_string;
    long count;
    short severity, status;
    double stamp, elapsed;
    double *values;
    char text[MAX_STRING_SIZE + 1];
    const char *error;
} Entry;

static struct {
    Entry *entries;
    size_t count, pending;
    double t0;
    epicsMutexId lock;
    epicsEventId changed;
} snap;

static void finish(Entry *e, const char *error) {
    e->done = 1;
    e->ok = error == NULL;
    e->error = error;
    e->elapsed = (mono_now() - snap.t0) * 1000.0;
    snap.pending--;
    epicsEventSignal(snap.changed);
}

static void on_get(struct event_handler_args args) {
    Entry *e = args.usr;
    epicsMutexMustLock(snap.lock);
    if (!e->done) {
        if (args.status != ECA_NORMAL || !args.dbr) {
            finish(e, ca_message(args.status));
        } else if (e->is_string) {
            const struct dbr_time_string *d = args.dbr;
            e->severity = d->severity;
            e->status = d->status;
            e->stamp = stamp_seconds(&d->stamp);
            memcpy(e->text, d->value, MAX_STRING_SIZE);
            e->text[MAX_STRING_SIZE] = 0;
            finish(e, NULL);
        } else {
            const struct dbr_time_double *d = args.dbr;
            e->severity = d->severity;
            e->status = d->status;
            e->stamp = stamp_seconds(&d->stamp);
            e->count = args.count;
            e->values = malloc((size_t)(args.count > 0 ? args.count : 1) * sizeof(double));
            if (e->values) memcpy(e->values, &d->value, (size_t)args.count * sizeof(double));
            finish(e, e->values ? NULL : "out of memory");
        }
    }
    epicsMutexUnlock(snap.lock);
}

static void on_connection(struct connection_handler_args args) {
    Entry *e = ca_puser(args.chid);
    epicsMutexMustLock(snap.lock);
    if (args.op == CA_OP_CONN_UP && !e->requested && !e->done) {
        e->requested = 1;
        e->is_string = ca_field_type(args.chid) == DBR_STRING;
        int status = ca_array_get_callback(e->is_string ? DBR_TIME_STRING : DBR_TIME_DOUBLE,
                                           e->is_string ? 1 : ca_element_count(args.chid),
                                           args.chid, on_get, e);
        if (status != ECA_NORMAL) finish(e, ca_message(status));
        else ca_flush_io();
    } else if (args.op == CA_OP_CONN_DOWN && e->requested && !e->done) {
        finish(e, "disconnected");
    }
    epicsMutexUnlock(snap.lock);
}

static void run_snapshot(char **names, size_t n, double timeout) {
    snap.entries = calloc(n ? n : 1, sizeof(Entry));
    snap.count = snap.pending = n;
    snap.lock = epicsMutexMustCreate();
    snap.changed = epicsEventMustCreate(epicsEventEmpty);
    emit_ready();
    expect_command("start");

    snap.t0 = mono_now();
    epicsMutexMustLock(snap.lock);
    for (size_t i = 0; i < n; i++) {
        int status = ca_create_channel(names[i], on_connection, &snap.entries[i],
                                       CA_PRIORITY_DEFAULT, &snap.entries[i].ch);
        if (status != ECA_NORMAL) finish(&snap.entries[i], ca_message(status));
    }
    epicsMutexUnlock(snap.lock);
    ca_flush_io();

    /* Until every PV has answered or the deadline; gets already started when the
     * deadline passes have up to one more timeout to complete. */
    double deadline = snap.t0 + timeout, hard = deadline + timeout;
    for (;;) {
        epicsMutexMustLock(snap.lock);
        size_t pending = snap.pending, started = 0;
        if (pending && mono_now() >= deadline)
            for (size_t i = 0; i < n; i++)
                if (!snap.entries[i].done && snap.entries[i].requested) started++;
        epicsMutexUnlock(snap.lock);
        double now = mono_now();
        if (!pending || (now >= deadline && (!started || now >= hard))) break;
        epicsEventWaitWithTimeout(snap.changed, (now < deadline ? deadline : hard) - now);
    }
    epicsMutexMustLock(snap.lock);
    for (size_t i = 0; i < n; i++)
        if (!snap.entries[i].done)
            finish(&snap.entries[i], snap.entries[i].requested ? "timeout" : "not found");
    epicsMutexUnlock(snap.lock);
    emit("{\"ev\":\"done\"}\n", NULL, 0);

    expect_command("ship");
    Buf b = {0};
    buf_add(&b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        Entry *e = &snap.entries[i];
        if (i) buf_add(&b, ",", 1);
        if (!e->ok) {
            buf_add(&b, "{\"ok\":false,\"error\":", 20);
            buf_string(&b, e->error ? e->error : "failed");
        } else {
            buf_add(&b, "{\"ok\":true,\"value\":", 19);
            if (e->is_string) buf_string(&b, e->text);
            else if (e->count == 1) buf_number(&b, e->values[0]);
            else {
                buf_add(&b, "[", 1);
                for (long k = 0; k < e->count; k++) {
                    if (k) buf_add(&b, ",", 1);
                    buf_number(&b, e->values[k]);
                }
                buf_add(&b, "]", 1);
            }
            buf_printf(&b, ",\"severity\":%d,\"status\":%d,\"timestamp\":%.9f",
                       e->severity, e->status, e->stamp);
        }
        buf_printf(&b, ",\"elapsedMs\":%.3f}", e->elapsed);
    }
    buf_add(&b, "]", 1);
    char line[96];
    snprintf(line, sizeof line, "{\"ev\":\"results\",\"bytes\":%zu}\n", b.len);
    emit(line, b.p, b.len);
}

/* ---- monitor -------------------------------------------------------------------- */

typedef struct {
    uint32_t index;
    int16_t severity, status;
    double value, stamp, received;
} Sample;

static struct {
    Sample *samples;
    long *counts;
    size_t count, started, finished;
    long per_pv;
    int closed;
    epicsMutexId lock;
} mon;

static void on_update(struct event_handler_args args) {
    double received = wall_now();
    size_t i = (size_t)(uintptr_t)args.usr;
    if (args.status != ECA_NORMAL || !args.dbr) return;
    const struct dbr_time_double *d = args.dbr;
    epicsMutexMustLock(mon.lock);
    long c = mon.counts[i];
    if (c < mon.per_pv && !mon.closed) {
        Sample *s = &mon.samples[i * (size_t)mon.per_pv + (size_t)c];
        s->index = (uint32_t)i;
        s->severity = d->severity;
        s->status = d->status;
        s->value = d->value;
        s->stamp = stamp_seconds(&d->stamp);
        s->received = received;
        mon.counts[i] = c + 1;
        if (c == 0 && ++mon.started == mon.count) {
            char line[64];
            snprintf(line, sizeof line, "{\"ev\":\"connected\",\"count\":%zu}\n", mon.count);
            emit(line, NULL, 0);
        }
        if (c + 1 == mon.per_pv && ++mon.finished == mon.count)
            emit("{\"ev\":\"complete\"}\n", NULL, 0);
    }
    epicsMutexUnlock(mon.lock);
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int k = 0; k < bytes; k++) p[k] = (unsigned char)(v >> (8 * k));
}

static void put_double(unsigned char *p, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_le(p, bits, 8);
}

static void ship_samples(void);

static void monitor_init(size_t n, long per_pv) {
    mon.count = n;
    mon.per_pv = per_pv;
    mon.samples = malloc((n ? n : 1) * (size_t)per_pv * sizeof(Sample));
    mon.counts = calloc(n ? n : 1, sizeof(long));
    mon.lock = epicsMutexMustCreate();
    if (!mon.samples || !mon.counts) fail(1, "out of memory for %zu x %ld samples", n, per_pv);
}

static void run_monitor(char **names, size_t n, long per_pv) {
    monitor_init(n, per_pv);
    chid *channels = calloc(n ? n : 1, sizeof(chid));
    if (!channels) fail(1, "out of memory");
    emit_ready();
    expect_command("start");

    for (size_t i = 0; i < n; i++) {
        evid ev;
        int status = ca_create_channel(names[i], NULL, NULL, CA_PRIORITY_DEFAULT, &channels[i]);
        if (status == ECA_NORMAL)
            status = ca_create_subscription(DBR_TIME_DOUBLE, 1, channels[i], DBE_VALUE | DBE_ALARM,
                                            on_update, (void *)(uintptr_t)i, &ev);
        if (status != ECA_NORMAL) fail(1, "%s: %s", names[i], ca_message(status));
    }
    ca_flush_io();
    if (n == 0) emit("{\"ev\":\"connected\",\"count\":0}\n{\"ev\":\"complete\"}\n", NULL, 0);
    ship_samples();
}

/* After `ship`: stop storing, then write every stored sample in the 32-byte layout. */
static void ship_samples(void) {
    size_t n = mon.count;
    long per_pv = mon.per_pv;
    expect_command("ship");
    epicsMutexMustLock(mon.lock);
    mon.closed = 1;
    epicsMutexUnlock(mon.lock);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += (size_t)mon.counts[i];
    unsigned char *out = malloc(total ? total * SAMPLE_BYTES : 1), *p = out;
    if (!out) fail(1, "out of memory");
    for (size_t i = 0; i < n; i++)
        for (long k = 0; k < mon.counts[i]; k++) {
            const Sample *s = &mon.samples[i * (size_t)per_pv + (size_t)k];
            put_le(p, s->index, 4);
            put_le(p + 4, (uint16_t)s->severity, 2);
            put_le(p + 6, (uint16_t)s->status, 2);
            put_double(p + 8, s->value);
            put_double(p + 16, s->stamp);
            put_double(p + 24, s->received);
            p += SAMPLE_BYTES;
        }
    char line[96];
    snprintf(line, sizeof line, "{\"ev\":\"samples\",\"count\":%zu,\"bytes\":%zu}\n", total,
             total * SAMPLE_BYTES);
    emit(line, out, total * SAMPLE_BYTES);
}

/* ---- array: one large waveform ----------------------------------------------------- */

static struct {
    const char *name;
    int subscribed, check_all;
    long first_length;
    evid ev;
} arr;

/* Element i of a native-type value block, as a double (every CA numeric type fits). */
static double element(const void *v, chtype type, long i) {
    switch (type) {
    case DBR_TIME_DOUBLE: return ((const dbr_double_t *)v)[i];
    case DBR_TIME_FLOAT: return ((const dbr_float_t *)v)[i];
    case DBR_TIME_LONG: return ((const dbr_long_t *)v)[i];
    case DBR_TIME_SHORT: return ((const dbr_short_t *)v)[i];
    case DBR_TIME_CHAR: return ((const dbr_char_t *)v)[i];
    default: return NAN;
    }
}

/* Whether every element equals the first, typed loops (the full check of the tests). */
#define ALL_EQUAL(T) { const T *p = v; T f = p[0]; for (long i = 1; i < count; i++) if (p[i] != f) return 0; return 1; }
static int all_equal(const void *v, chtype type, long count) {
    switch (type) {
    case DBR_TIME_DOUBLE: ALL_EQUAL(dbr_double_t)
    case DBR_TIME_FLOAT: ALL_EQUAL(dbr_float_t)
    case DBR_TIME_LONG: ALL_EQUAL(dbr_long_t)
    case DBR_TIME_SHORT: ALL_EQUAL(dbr_short_t)
    case DBR_TIME_CHAR: ALL_EQUAL(dbr_char_t)
    default: return 0;
    }
}

/* One update in the waveform's native type: the first element is the value, the status the
 * bits of the checks that failed (1 middle, 2 last, 4 length, 8 any element with --check-all). */
static void on_array(struct event_handler_args args) {
    double received = wall_now();
    if (args.status != ECA_NORMAL || !args.dbr) {
        const char *limit = getenv("EPICS_CA_MAX_ARRAY_BYTES");
        fail(1, "%s: %s (EPICS_CA_MAX_ARRAY_BYTES=%s)", arr.name, ca_message(args.status),
             limit ? limit : "unset");
    }
    const struct dbr_time_double *d = args.dbr; /* status, severity, stamp: the same in every TIME type */
    const void *v = dbr_value_ptr(args.dbr, args.type);
    long count = args.count;
    if (arr.first_length < 0) arr.first_length = count;
    double first = count > 0 ? element(v, args.type, 0) : NAN;
    int bad = count > 0 ? (element(v, args.type, count / 2) != first) | (element(v, args.type, count - 1) != first) << 1 : 0;
    if (count != arr.first_length || count == 0) bad |= 4;
    if (arr.check_all && count > 0 && !all_equal(v, args.type, count)) bad |= 8;
    epicsMutexMustLock(mon.lock);
    long c = mon.counts[0];
    if (c < mon.per_pv && !mon.closed) {
        Sample *s = &mon.samples[c];
        s->index = 0;
        s->severity = d->severity;
        s->status = (int16_t)bad;
        s->value = first;
        s->stamp = stamp_seconds(&d->stamp);
        s->received = received;
        mon.counts[0] = c + 1;
        if (c == 0) emit("{\"ev\":\"connected\",\"count\":1}\n", NULL, 0);
        if (c + 1 == mon.per_pv) {
            char line[80];
            snprintf(line, sizeof line, "{\"ev\":\"complete\",\"elements\":%ld}\n", count);
            emit(line, NULL, 0);
        }
    }
    epicsMutexUnlock(mon.lock);
}

/* libca drops an update larger than EPICS_CA_MAX_ARRAY_BYTES (when EPICS_CA_AUTO_ARRAY_BYTES is
 * NO) with only a printed message: the array task ends with why instead of waiting. */
static int on_ca_message(const char *fmt, va_list ap) {
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fputs(msg, stderr);
    if (arr.name && strstr(msg, "EPICS_CA_MAX_ARRAY_BYTES")) {
        const char *limit = getenv("EPICS_CA_MAX_ARRAY_BYTES"), *autob = getenv("EPICS_CA_AUTO_ARRAY_BYTES");
        fail(1, "%s: libca ignored an update larger than EPICS_CA_MAX_ARRAY_BYTES=%s (EPICS_CA_AUTO_ARRAY_BYTES=%s): raise the limit",
             arr.name, limit ? limit : "unset", autob ? autob : "unset");
    }
    return 0;
}

static void on_array_connection(struct connection_handler_args args) {
    if (args.op != CA_OP_CONN_UP || arr.subscribed) return;
    arr.subscribed = 1;
    chtype type = dbf_type_to_DBR_TIME(ca_field_type(args.chid));
    if (type == DBR_TIME_STRING || type == DBR_TIME_ENUM) type = DBR_TIME_DOUBLE;
    int status = ca_create_subscription(type, 0, args.chid, DBE_VALUE | DBE_ALARM,
                                        on_array, NULL, &arr.ev);
    if (status != ECA_NORMAL) fail(1, "%s: %s", arr.name, ca_message(status));
    ca_flush_io();
}

static void run_array(char **names, size_t n, long samples) {
    if (n != 1) fail(2, "array: --names must hold one name, it holds %zu", n);
    monitor_init(1, samples);
    arr.name = names[0];
    arr.first_length = -1;
    ca_replace_printf_handler(on_ca_message);
    emit_ready();
    expect_command("start");
    chid ch;
    int status = ca_create_channel(arr.name, on_array_connection, NULL, CA_PRIORITY_DEFAULT, &ch);
    if (status != ECA_NORMAL) fail(1, "%s: %s", arr.name, ca_message(status));
    ca_flush_io();
    ship_samples();
}

#include "epicsperf_ca_put.inc.c"

/* ---- get: one PV, caget style --------------------------------------------------- */

static int run_get(const char *name, double timeout) {
    chid ch;
    double t0 = mono_now();
    if (ca_context_create(ca_disable_preemptive_callback) != ECA_NORMAL) {
        fprintf(stderr, "%s: cannot create a CA context\n", name);
        return 1;
    }
    int status = ca_create_channel(name, NULL, NULL, CA_PRIORITY_DEFAULT, &ch);
    if (status == ECA_NORMAL) status = ca_pend_io(timeout);
    if (status != ECA_NORMAL) {
        fprintf(stderr, "%s: not found (%s)\n", name, ca_message(status));
        return 1;
    }
    long count = ca_element_count(ch);
    int is_string = ca_field_type(ch) == DBR_STRING || count < 1;
    void *data = calloc((size_t)dbr_size_n(is_string ? DBR_TIME_STRING : DBR_TIME_DOUBLE, count), 1);
    if (!data) return 1;
    status = ca_array_get(is_string ? DBR_TIME_STRING : DBR_TIME_DOUBLE, is_string ? 1 : count, ch, data);
    double left = timeout - (mono_now() - t0);
    if (status == ECA_NORMAL) status = ca_pend_io(left > 0.001 ? left : 0.001);
    if (status != ECA_NORMAL) {
        fprintf(stderr, "%s: %s\n", name, ca_message(status));
        return 1;
    }
    if (is_string) {
        printf("%s %.*s\n", name, MAX_STRING_SIZE, ((struct dbr_time_string *)data)->value);
    } else {
        const dbr_double_t *v = &((struct dbr_time_double *)data)->value;
        if (count == 1) printf("%s %.17g\n", name, v[0]);
        else {
            printf("%s %ld", name, count);
            for (long k = 0; k < count; k++) printf(" %.17g", v[k]);
            printf("\n");
        }
    }
    free(data);
    ca_clear_channel(ch);
    ca_context_destroy();
    return 0;
}

int main(int argc, char **argv) {
    Options o;
    if (argc >= 2 && !strcmp(argv[1], "get")) {
        parse_options(argc, argv, &o);
        if (!o.name) { fprintf(stderr, "usage: epicsperf-ca get NAME [--timeout-ms N]\n"); return 2; }
        return run_get(o.name, o.timeout);
    }
    if (fcntl(EVENTS_FD, F_GETFD) == -1) {
        fprintf(stderr, "epicsperf-ca: fd 3 is not open (the orchestrator opens it)\n");
        return 2;
    }
    out_lock = epicsMutexMustCreate();
    parse_options(argc, argv, &o);
    if (!o.names_file) fail(2, "--names FILE is required");
    size_t n;
    char **names = read_names(o.names_file, &n);
    int status = ca_context_create(ca_enable_preemptive_callback);
    if (status != ECA_NORMAL) fail(1, "cannot create a CA context: %s", ca_message(status));
    if (!strcmp(o.mode, "snapshot")) run_snapshot(names, n, o.timeout);
    else if (!strcmp(o.mode, "monitor")) run_monitor(names, n, o.samples);
    else if (!strcmp(o.mode, "array")) { arr.check_all = o.check_all; run_array(names, n, o.samples); }
    else if (!strcmp(o.mode, "array-put")) {
        if (o.elements < 1) fail(2, "array-put: --elements N is required");
        run_array_put(names, n, o.samples, o.elements, !o.no_callback);
    } else if (!strcmp(o.mode, "latency")) {
        if (o.nsizes == 0) fail(2, "latency: --sizes N,N,... is required");
        run_latency(names, n, o.samples, o.sizes, o.nsizes);
    }
    else fail(2, "unknown task %s", o.mode);
    expect_command("exit");
    ca_context_destroy();
    return 0;
}
