/* epicsperf-pvxs: the PV Access reference runner on pvxs (docs/runners.md), the counterpart of
 * epicsperf-ca on libca.
 *
 *   epicsperf-pvxs snapshot --names FILE --timeout-ms N
 *   epicsperf-pvxs monitor --names FILE --samples N
 *   epicsperf-pvxs array --names FILE --samples N [--check-all]
 *   epicsperf-pvxs array-put | latency ...  (epicsperf_pvxs_put.inc.cpp)
 *
 * One client Context from the EPICS_PVA_* environment. Snapshot: a get of
 * field(value,alarm,timeStamp) per name, all issued at once, each answered or given up at the
 * timeout. Monitor and array: one subscription per name with the same fields, connection
 * events masked; updates are popped in pvxs's event callback (its worker thread), where the
 * array task looks at the first, middle and last elements of the received array in its own
 * type (and every element with --check-all), with no copy. The wheel's libpvxs is built with the
 * old C++ string ABI: compile with -D_GLIBCXX_USE_CXX11_ABI=0 (src/bench/cxxlib.ts does).
 */
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <pvxs/client.h>
#include <pvxs/data.h>
#include <pvxs/version.h>

using namespace pvxs;

namespace {

const size_t SAMPLE_BYTES = 32;

double wall_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

#include "epicsperf_events.inc.cpp"

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char b[32];
    snprintf(b, sizeof b, "%.17g", v);
    return b;
}


/* Next stdin command word; EOF means the orchestrator is gone. */
void expect_command(const char *word) {
    std::string line;
    for (;;) {
        if (!std::getline(std::cin, line)) _exit(0);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty()) continue;
        if (line != word) fail(2, "expected '%s', got '%s'", word, line.c_str());
        return;
    }
}

/* epicsAlarmConditionStrings: QSRV sends the CA alarm status as alarm.message. */
int ca_status(const std::string &message, int fallback) {
    static const char *names[] = {"NO_ALARM", "READ", "WRITE", "HIHI", "HIGH", "LOLO", "LOW", "STATE", "COS",
                                  "COMM", "TIMEOUT", "HWLIMIT", "CALC", "SCAN", "LINK", "SOFT", "BAD_SUB",
                                  "UDF", "DISABLE", "SIMM", "READ_ACCESS", "WRITE_ACCESS"};
    for (int i = 0; i < int(sizeof names / sizeof *names); i++)
        if (message == names[i]) return i;
    return fallback;
}

struct Meta {
    int severity = 0, status = 0;
    double stamp = 0.0;
};

Meta meta_of(const Value &v) {
    Meta m;
    m.severity = v["alarm.severity"].as<int32_t>();
    m.status = ca_status(v["alarm.message"].as<std::string>(), v["alarm.status"].as<int32_t>());
    m.stamp = double(v["timeStamp.secondsPastEpoch"].as<int64_t>()) + v["timeStamp.nanoseconds"].as<int32_t>() * 1e-9;
    return m;
}

const char *REQUEST = "field(value,alarm,timeStamp)";

/* ---- snapshot ------------------------------------------------------------------- */

std::string value_json(const Value &v) {
    Value f = v["value"];
    switch (f.type().code) {
    case TypeCode::Struct: return json_number(v["value.index"].as<double>()); /* NTEnum */
    case TypeCode::String: return json_string(f.as<std::string>());
    default: break;
    }
    if (f.type().isarray()) {
        auto arr = f.as<shared_array<const void>>().convertTo<const double>();
        std::string out = "[";
        for (size_t i = 0; i < arr.size(); i++) out += (i ? "," : "") + json_number(arr[i]);
        return out + "]";
    }
    return json_number(f.as<double>());
}

void run_snapshot(client::Context &ctx, const std::vector<std::string> &names, double timeout_ms) {
    struct Entry {
        std::string json;
        bool done = false;
    };
    std::vector<Entry> entries(names.size());
    std::mutex lock;
    std::condition_variable cv;
    size_t left = names.size();
    std::vector<std::shared_ptr<client::Operation>> ops;
    emit("{\"ev\":\"ready\",\"client\":\"c-pvxs\",\"version\":" + json_string(version_str()) + "}\n");
    expect_command("start");
    double t0 = wall_now();
    auto elapsed = [t0]() { return json_number(std::round((wall_now() - t0) * 1e6) / 1e3); };
    auto settle = [&](size_t i, std::string json) {
        std::lock_guard<std::mutex> g(lock);
        if (entries[i].done) return;
        entries[i].json = std::move(json);
        entries[i].done = true;
        if (--left == 0) cv.notify_all();
    };
    for (size_t i = 0; i < names.size(); i++) {
        ops.push_back(ctx.get(names[i]).pvRequest(REQUEST).result([&, i](client::Result &&r) {
            try {
                Value v = r();
                Meta m = meta_of(v);
                settle(i, "{\"ok\":true,\"value\":" + value_json(v) + ",\"severity\":" + std::to_string(m.severity) +
                              ",\"status\":" + std::to_string(m.status) + ",\"timestamp\":" + json_number(m.stamp) +
                              ",\"elapsedMs\":" + elapsed() + "}");
            } catch (std::exception &e) {
                settle(i, "{\"ok\":false,\"error\":" + json_string(e.what()) + ",\"elapsedMs\":" + elapsed() + "}");
            }
        }).exec());
    }
    {
        std::unique_lock<std::mutex> g(lock);
        cv.wait_until(g, std::chrono::steady_clock::now() + std::chrono::microseconds(int64_t(timeout_ms * 1000)),
                      [&] { return left == 0; });
    }
    for (size_t i = 0; i < names.size(); i++) settle(i, "{\"ok\":false,\"error\":\"not found\",\"elapsedMs\":" + elapsed() + "}");
    for (auto &op : ops) op->cancel();
    emit("{\"ev\":\"done\"}\n");
    expect_command("ship");
    std::string body = "[";
    for (size_t i = 0; i < entries.size(); i++) body += (i ? "," : "") + entries[i].json;
    body += "]";
    emit("{\"ev\":\"results\",\"bytes\":" + std::to_string(body.size()) + "}\n", body.data(), body.size());
}

/* ---- monitor and array ------------------------------------------------------------ */

struct Sample {
    uint32_t index;
    int16_t severity, status;
    double value, stamp, received;
};

struct Store {
    std::vector<Sample> samples;
    std::vector<long> counts;
    size_t count = 0, started = 0, finished = 0;
    long per_pv = 0, elements = 0;
    bool closed = false;
    std::mutex lock;

    Store(size_t n, long per) : samples(n * size_t(per)), counts(n), count(n), per_pv(per) {}

    /* length: the array's (array task), -1 for scalars, -2 for the put tasks (which write
     * their own connected and complete events). */
    void add(size_t i, int severity, int status, double value, double stamp, double received, long length = -1) {
        std::lock_guard<std::mutex> g(lock);
        long c = counts[i];
        if (c >= per_pv || closed) return;
        samples[i * size_t(per_pv) + size_t(c)] = Sample{uint32_t(i), int16_t(severity), int16_t(status), value, stamp, received};
        counts[i] = c + 1;
        if (length == -2) return;
        if (length >= 0) elements = length;
        if (c == 0 && ++started == count) emit("{\"ev\":\"connected\",\"count\":" + std::to_string(count) + "}\n");
        if (c + 1 == per_pv && ++finished == count)
            emit(length >= 0 ? "{\"ev\":\"complete\",\"elements\":" + std::to_string(elements) + "}\n" : "{\"ev\":\"complete\"}\n");
    }

    void ship() {
        {
            std::lock_guard<std::mutex> g(lock);
            closed = true;
        }
        size_t total = 0;
        for (long c : counts) total += size_t(c);
        std::vector<unsigned char> out(total * SAMPLE_BYTES);
        unsigned char *p = out.data();
        for (size_t i = 0; i < count; i++)
            for (long k = 0; k < counts[i]; k++) {
                const Sample &s = samples[i * size_t(per_pv) + size_t(k)];
                /* little-endian host (x86-64, aarch64): the record's layout in memory order */
                memcpy(p, &s.index, 4);
                memcpy(p + 4, &s.severity, 2);
                memcpy(p + 6, &s.status, 2);
                memcpy(p + 8, &s.value, 8);
                memcpy(p + 16, &s.stamp, 8);
                memcpy(p + 24, &s.received, 8);
                p += SAMPLE_BYTES;
            }
        emit("{\"ev\":\"samples\",\"count\":" + std::to_string(total) + ",\"bytes\":" + std::to_string(out.size()) + "}\n",
             out.data(), out.size());
    }
};

template <typename T>
int check_array(const void *data, size_t n, bool all, double *first_out) {
    const T *a = static_cast<const T *>(data);
    T first = a[0];
    *first_out = double(first);
    int bad = (a[n / 2] != first ? 1 : 0) | (a[n - 1] != first ? 2 : 0);
    if (all)
        for (size_t i = 1; i < n; i++)
            if (a[i] != first) { bad |= 8; break; }
    return bad;
}

/* The ARRAY_BAD bits of docs/runners.md for one received array, in its own element type. */
int check_any(const shared_array<const void> &arr, bool all, double *first) {
    size_t n = arr.size();
    if (n == 0) { *first = NAN; return 4; }
    const void *d = arr.data();
    switch (arr.original_type()) {
    case ArrayType::Int8: return check_array<int8_t>(d, n, all, first);
    case ArrayType::UInt8: return check_array<uint8_t>(d, n, all, first);
    case ArrayType::Int16: return check_array<int16_t>(d, n, all, first);
    case ArrayType::UInt16: return check_array<uint16_t>(d, n, all, first);
    case ArrayType::Int32: return check_array<int32_t>(d, n, all, first);
    case ArrayType::UInt32: return check_array<uint32_t>(d, n, all, first);
    case ArrayType::Int64: return check_array<int64_t>(d, n, all, first);
    case ArrayType::UInt64: return check_array<uint64_t>(d, n, all, first);
    case ArrayType::Float32: return check_array<float>(d, n, all, first);
    case ArrayType::Float64: return check_array<double>(d, n, all, first);
    default: *first = NAN; return 8;
    }
}

void run_monitor(client::Context &ctx, const std::vector<std::string> &names, long per_pv, bool array, bool check_all) {
    if (array && names.size() != 1) fail(2, "array: --names must hold one name, it holds %zu", names.size());
    Store store(names.size(), per_pv);
    std::vector<std::shared_ptr<client::Subscription>> subs;
    long first_length = -1;
    emit("{\"ev\":\"ready\",\"client\":\"c-pvxs\",\"version\":" + json_string(version_str()) + "}\n");
    expect_command("start");
    for (size_t i = 0; i < names.size(); i++) {
        subs.push_back(ctx.monitor(names[i]).pvRequest(REQUEST).maskConnected(true).maskDisconnected(true)
            .event([&, i](client::Subscription &sub) {
                try {
                    while (Value v = sub.pop()) {
                        double received = wall_now();
                        Meta m = meta_of(v);
                        if (!array) {
                            store.add(i, m.severity, m.status, v["value"].as<double>(), m.stamp, received);
                            continue;
                        }
                        auto arr = v["value"].as<shared_array<const void>>();
                        double first;
                        int bad = check_any(arr, check_all, &first);
                        long n = long(arr.size());
                        if (first_length < 0) first_length = n;
                        if (n != first_length) bad |= 4;
                        store.add(0, m.severity, bad, first, m.stamp, received, n);
                    }
                } catch (std::exception &e) {
                    fail(1, "%s: %s", names[i].c_str(), e.what());
                }
            }).exec());
    }
    if (names.empty()) emit("{\"ev\":\"connected\",\"count\":0}\n{\"ev\":\"complete\"}\n");
    expect_command("ship");
    store.ship();
    for (auto &s : subs) s->cancel();
}

} // namespace

#include "epicsperf_pvxs_put.inc.cpp"

namespace {

std::vector<std::string> read_names(const std::string &path) {
    std::ifstream f(path);
    if (!f) fail(2, "cannot read --names %s: %s", path.c_str(), strerror(errno));
    std::vector<std::string> names;
    std::string line;
    while (std::getline(f, line)) {
        size_t a = line.find_first_not_of(" \t\r"), b = line.find_last_not_of(" \t\r");
        if (a != std::string::npos) names.push_back(line.substr(a, b - a + 1));
    }
    return names;
}

} // namespace

int main(int argc, char **argv) {
    if (fcntl(EVENTS_FD, F_GETFD) == -1) {
        fprintf(stderr, "epicsperf-pvxs: fd 3 is not open (the orchestrator opens it)\n");
        return 2;
    }
    if (argc < 2) fail(2, "usage: epicsperf-pvxs snapshot|monitor|array --names FILE");
    std::string task = argv[1], names_file;
    double timeout_ms = -1;
    long samples = 0;
    bool check_all = false, no_callback = false;
    long elements = 0;
    std::string type = "double";
    std::vector<long> sizes;
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--names" && i + 1 < argc) names_file = argv[++i];
        else if (a == "--timeout-ms" && i + 1 < argc) timeout_ms = atof(argv[++i]);
        else if (a == "--samples" && i + 1 < argc) samples = atol(argv[++i]);
        else if (a == "--check-all") check_all = true;
        else if (a == "--no-callback") no_callback = true;
        else if (a == "--elements" && i + 1 < argc) elements = atol(argv[++i]);
        else if (a == "--type" && i + 1 < argc) type = argv[++i];
        else if (a == "--sizes" && i + 1 < argc) {
            std::stringstream ss(argv[++i]);
            std::string item;
            while (std::getline(ss, item, ',')) {
                long v = atol(item.c_str());
                if (v < 1) fail(2, "--sizes must be positive numbers, got %s", argv[i]);
                sizes.push_back(v);
            }
        }
        else fail(2, "unknown argument %s", a.c_str());
    }
    if (names_file.empty()) fail(2, "--names FILE is required");
    if (task == "snapshot" && timeout_ms < 0) fail(2, "snapshot: --timeout-ms N is required");
    if (task != "snapshot" && samples < 1) fail(2, "%s: --samples N (at least 1) is required", task.c_str());
    auto names = read_names(names_file);
    try {
        client::Context ctx = client::Context::fromEnv();
        if (task == "snapshot") run_snapshot(ctx, names, timeout_ms);
        else if (task == "monitor") run_monitor(ctx, names, samples, false, false);
        else if (task == "array") run_monitor(ctx, names, samples, true, check_all);
        else if (task == "array-put") {
            if (elements < 1) fail(2, "array-put: --elements N is required");
            run_array_put(ctx, names, samples, elements, type, !no_callback);
        } else if (task == "latency") {
            if (sizes.empty()) fail(2, "latency: --sizes N,N,... is required");
            run_latency(ctx, names, samples, sizes, type);
        }
        else fail(2, "unknown task %s", task.c_str());
        expect_command("exit");
        ctx.close();
    } catch (std::exception &e) {
        fail(1, "%s", e.what());
    }
    _exit(0);
}
