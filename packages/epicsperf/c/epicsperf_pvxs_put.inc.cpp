/* The put-driven tasks of epicsperf-pvxs (docs/runners.md), included by epicsperf_pvxs.cpp:
 *
 *   epicsperf-pvxs array-put --names FILE --samples N --elements E --type T
 *   epicsperf-pvxs latency --names FILE --samples N --sizes S1,S2,...
 *
 * array-put puts N arrays of E elements of type T (every element of put k equal to k, wrapped
 * to the type) with .set("value", array), each waiting for the put's reply: PV Access has no
 * put without one, so --no-callback is an error that says so. latency subscribes to its channel,
 * then per size puts a double (or, for a CHAR waveform, byte) array filled with a fresh value and
 * waits for its own update carrying it. */

namespace {

template <typename T>
shared_array<const void> filled(size_t n, long long v) {
    shared_array<T> a(n, T(v));
    return a.freeze().template castTo<const void>();
}

/* An array of n elements of the named type, every element v cast to it (integers wrap). */
shared_array<const void> typed_array(const std::string &type, size_t n, long long v) {
    if (type == "float") return filled<float>(n, v);
    if (type == "int64") return filled<int64_t>(n, v);
    if (type == "int32") return filled<int32_t>(n, int32_t(uint32_t(v)));
    if (type == "int16") return filled<int16_t>(n, int16_t(uint16_t(v)));
    if (type == "int8") return filled<int8_t>(n, int8_t(uint8_t(v)));
    if (type == "char") return filled<uint8_t>(n, uint8_t(v));
    return filled<double>(n, v);
}

void run_array_put(client::Context &ctx, const std::vector<std::string> &names, long samples, long elements,
                   const std::string &type, bool callback) {
    if (names.size() != 1) fail(2, "array-put: --names must hold one name, it holds %zu", names.size());
    Store store(1, samples);
    emit("{\"ev\":\"ready\",\"client\":\"c-pvxs\",\"version\":" + json_string(version_str()) + "}\n");
    expect_command("start");
    if (!callback) fail(1, "PV Access has no put without a reply (pvxs)");
    ctx.get(names[0]).pvRequest("field(value)").exec()->wait(10.0);
    emit("{\"ev\":\"connected\",\"count\":1}\n");
    for (long k = 1; k <= samples; k++) {
        auto arr = typed_array(type, size_t(elements), k);
        double t0 = wall_now();
        int status = 0;
        try {
            ctx.put(names[0]).set("value", arr).exec()->wait(60.0);
        } catch (std::exception &) {
            status = 1;
        }
        store.add(0, 0, status, double(k), t0, wall_now(), -2);
    }
    emit("{\"ev\":\"complete\",\"elements\":" + std::to_string(elements) + "}\n");
    expect_command("ship");
    store.ship();
}

const long LATENCY_ROUNDS_NOT_KEPT = 3;

void run_latency(client::Context &ctx, const std::vector<std::string> &names, long samples, const std::vector<long> &sizes,
                 const std::string &type) {
    if (names.size() != 1) fail(2, "latency: --names must hold one name, it holds %zu", names.size());
    Store store(sizes.size(), samples);
    std::mutex lock;
    std::condition_variable cv;
    bool first = false, arrived = false, waiting = false;
    double want = 0, received = 0;
    Meta got;
    size_t count = 0;
    emit("{\"ev\":\"ready\",\"client\":\"c-pvxs\",\"version\":" + json_string(version_str()) + "}\n");
    expect_command("start");
    auto sub = ctx.monitor(names[0]).pvRequest(REQUEST).maskConnected(true).maskDisconnected(true)
        .event([&](client::Subscription &s) {
            try {
                while (Value v = s.pop()) {
                    double now = wall_now();
                    auto arr = v["value"].as<shared_array<const void>>();
                    double value0 = arr.size() ? arr.convertTo<const double>()[0] : NAN;
                    std::lock_guard<std::mutex> g(lock);
                    first = true;
                    if (waiting && value0 == want) {
                        waiting = false;
                        arrived = true;
                        received = now;
                        got = meta_of(v);
                        count = arr.size();
                    }
                    cv.notify_all();
                }
            } catch (std::exception &e) {
                fail(1, "%s: %s", names[0].c_str(), e.what());
            }
        }).exec();
    {
        std::unique_lock<std::mutex> g(lock);
        if (!cv.wait_for(g, std::chrono::seconds(30), [&] { return first; })) fail(1, "%s: no first monitor update", names[0].c_str());
    }
    emit("{\"ev\":\"connected\",\"count\":1}\n");
    long counter = 0;
    for (size_t i = 0; i < sizes.size(); i++) {
        for (long rnd = -LATENCY_ROUNDS_NOT_KEPT; rnd < samples; rnd++) {
            long value = counter++ % 250 + 1;
            auto arr = typed_array(type == "char" ? "char" : "double", size_t(sizes[i]), value);
            {
                std::lock_guard<std::mutex> g(lock);
                want = double(value);
                waiting = true;
                arrived = false;
            }
            double t0 = wall_now();
            auto op = ctx.put(names[0]).set("value", arr).exec();
            std::unique_lock<std::mutex> g(lock);
            if (!cv.wait_for(g, std::chrono::seconds(60), [&] { return arrived; }))
                fail(1, "%s: no monitor update of the %ld-element put within 60 s", names[0].c_str(), sizes[i]);
            if (rnd >= 0) store.add(i, got.severity, long(count) == sizes[i] ? 0 : 4, received - t0, got.stamp, received, -2);
            g.unlock();
            op->wait(60.0);
        }
    }
    emit("{\"ev\":\"complete\"}\n");
    expect_command("ship");
    store.ship();
    sub->cancel();
}

} // namespace
