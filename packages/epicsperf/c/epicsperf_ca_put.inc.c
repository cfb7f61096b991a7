/* The put-driven tasks of epicsperf-ca (docs/runners.md), included by epicsperf_ca.c:
 *
 *   epicsperf-ca array-put --names FILE --samples N --elements E --type T [--no-callback]
 *   epicsperf-ca latency --names FILE --samples N --sizes S1,S2,...
 *
 * array-put puts N arrays of E elements in the channel's native type, every element of put k
 * equal to k (wrapped to the type, DBR_CHAR unsigned), one after another as fast as libca
 * takes them: with ca_array_put_callback, waiting for each completion, or with ca_array_put
 * and a flush. latency subscribes to its channel (native TIME type, count 0), then per size
 * puts an array filled with a fresh value and waits for its own update carrying it. */

static void store_sample(size_t i, int severity, int status, double value, double stamp, double received) {
    epicsMutexMustLock(mon.lock);
    long c = mon.counts[i];
    if (c < mon.per_pv && !mon.closed) {
        Sample *s = &mon.samples[i * (size_t)mon.per_pv + (size_t)c];
        s->index = (uint32_t)i;
        s->severity = (int16_t)severity;
        s->status = (int16_t)status;
        s->value = value;
        s->stamp = stamp;
        s->received = received;
        mon.counts[i] = c + 1;
    }
    epicsMutexUnlock(mon.lock);
}

/* Every element of a native-type block set to v (cast to the type: integers wrap). */
static void fill_native(void *buf, chtype type, long count, long long v) {
    for (long i = 0; i < count; i++) switch (type) {
        case DBR_DOUBLE: ((dbr_double_t *)buf)[i] = (double)v; break;
        case DBR_FLOAT: ((dbr_float_t *)buf)[i] = (float)v; break;
        case DBR_LONG: ((dbr_long_t *)buf)[i] = (dbr_long_t)(uint32_t)v; break;
        case DBR_SHORT: ((dbr_short_t *)buf)[i] = (dbr_short_t)(uint16_t)v; break;
        case DBR_CHAR: ((dbr_char_t *)buf)[i] = (dbr_char_t)v; break;
        default: break;
    }
}

static chid connect_channel(const char *name) {
    chid ch;
    int status = ca_create_channel(name, NULL, NULL, CA_PRIORITY_DEFAULT, &ch);
    if (status == ECA_NORMAL) status = ca_pend_io(10.0);
    if (status != ECA_NORMAL) fail(1, "%s: not found (%s)", name, ca_message(status));
    return ch;
}

static chtype native_type(chid ch) {
    chtype t = dbf_type_to_DBR(ca_field_type(ch));
    return t == DBR_STRING || t == DBR_ENUM ? DBR_DOUBLE : t;
}

static struct {
    epicsEventId done;
    int status;
} put_state;

static void on_put_done(struct event_handler_args args) {
    put_state.status = args.status;
    epicsEventSignal(put_state.done);
}

static void run_array_put(char **names, size_t n, long samples, long elements, int callback) {
    if (n != 1) fail(2, "array-put: --names must hold one name, it holds %zu", n);
    monitor_init(1, samples);
    put_state.done = epicsEventMustCreate(epicsEventEmpty);
    emit_ready();
    expect_command("start");
    chid ch = connect_channel(names[0]);
    chtype type = native_type(ch);
    void *buf = malloc((size_t)dbr_size_n(type, elements));
    if (!buf) fail(1, "out of memory for %ld elements", elements);
    emit("{\"ev\":\"connected\",\"count\":1}\n", NULL, 0);
    for (long k = 1; k <= samples; k++) {
        fill_native(buf, type, elements, k);
        double t0 = wall_now();
        int status;
        if (callback) {
            status = ca_array_put_callback(type, (unsigned long)elements, ch, buf, on_put_done, NULL);
            ca_flush_io();
            if (status == ECA_NORMAL) {
                if (epicsEventWaitWithTimeout(put_state.done, 60.0) != epicsEventWaitOK) status = ECA_TIMEOUT;
                else status = put_state.status;
            }
        } else {
            status = ca_array_put(type, (unsigned long)elements, ch, buf);
            ca_flush_io();
        }
        store_sample(0, 0, status == ECA_NORMAL ? 0 : 1, (double)k, t0, wall_now());
    }
    char line[80];
    snprintf(line, sizeof line, "{\"ev\":\"complete\",\"elements\":%ld}\n", elements);
    emit(line, NULL, 0);
    ship_samples();
    free(buf);
}

static struct {
    epicsMutexId lock;
    epicsEventId arrived, first;
    double want;
    int waiting;
    double received, stamp;
    int severity;
    long count;
} lat;

static void on_latency_update(struct event_handler_args args) {
    double received = wall_now();
    if (args.status != ECA_NORMAL || !args.dbr) return;
    const struct dbr_time_double *d = args.dbr;
    double first = args.count > 0 ? element(dbr_value_ptr(args.dbr, args.type), args.type, 0) : NAN;
    epicsEventSignal(lat.first);
    epicsMutexMustLock(lat.lock);
    if (lat.waiting && first == lat.want) {
        lat.waiting = 0;
        lat.received = received;
        lat.stamp = stamp_seconds(&d->stamp);
        lat.severity = d->severity;
        lat.count = args.count;
        epicsEventSignal(lat.arrived);
    }
    epicsMutexUnlock(lat.lock);
}

#define LATENCY_ROUNDS_NOT_KEPT 3

static void run_latency(char **names, size_t n, long samples, const long *sizes, size_t nsizes) {
    if (n != 1) fail(2, "latency: --names must hold one name, it holds %zu", n);
    monitor_init(nsizes, samples);
    lat.lock = epicsMutexMustCreate();
    lat.arrived = epicsEventMustCreate(epicsEventEmpty);
    lat.first = epicsEventMustCreate(epicsEventEmpty);
    emit_ready();
    expect_command("start");
    chid ch = connect_channel(names[0]);
    chtype type = native_type(ch);
    evid ev;
    int status = ca_create_subscription(dbf_type_to_DBR_TIME(type), 0, ch, DBE_VALUE | DBE_ALARM,
                                        on_latency_update, NULL, &ev);
    ca_flush_io();
    if (status != ECA_NORMAL || epicsEventWaitWithTimeout(lat.first, 30.0) != epicsEventWaitOK)
        fail(1, "%s: no first monitor update", names[0]);
    emit("{\"ev\":\"connected\",\"count\":1}\n", NULL, 0);
    long counter = 0;
    for (size_t i = 0; i < nsizes; i++) {
        long size = sizes[i];
        void *buf = malloc((size_t)dbr_size_n(type, size));
        if (!buf) fail(1, "out of memory for %ld elements", size);
        for (long rnd = -LATENCY_ROUNDS_NOT_KEPT; rnd < samples; rnd++) {
            long value = counter++ % 250 + 1;
            fill_native(buf, type, size, value);
            epicsMutexMustLock(lat.lock);
            lat.want = (double)value;
            lat.waiting = 1;
            epicsMutexUnlock(lat.lock);
            double t0 = wall_now();
            status = ca_array_put(type, (unsigned long)size, ch, buf);
            ca_flush_io();
            if (status != ECA_NORMAL) fail(1, "%s: put of %ld elements: %s", names[0], size, ca_message(status));
            if (epicsEventWaitWithTimeout(lat.arrived, 60.0) != epicsEventWaitOK)
                fail(1, "%s: no monitor update of the %ld-element put within 60 s", names[0], size);
            if (rnd >= 0) store_sample(i, lat.severity, lat.count == size ? 0 : 4, lat.received - t0, lat.stamp, lat.received);
        }
        free(buf);
    }
    emit("{\"ev\":\"complete\"}\n", NULL, 0);
    ship_samples();
}
