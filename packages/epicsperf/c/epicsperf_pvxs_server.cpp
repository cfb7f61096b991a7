/* epicsperf-pvxs-server: the pvxs server runner (docs/runners.md, "Server runners").
 *
 *   epicsperf-pvxs-server serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]
 *
 * One pvxs server from the EPICS_PVAS_* / EPICS_PVA_* environment (PV Access only), publishing
 * <P>CROSS:DOUBLE (NTScalar double), <P>CROSS:INT32:<n> (NTScalar int32[n]) and
 * <P>CROSS:BYTES:<m> (NTScalar int8[m]), each a read-only server::SharedPV opened at 0.
 * With --latency N also <P>LATENCY:DOUBLE (NTScalar double[]) and <P>LATENCY:CHAR (NTScalar
 * int8[]), opened as one element 0, whose SharedPV::onPut handler (on a pvxs server worker)
 * refuses more than N elements, else stamps the value put with the wall clock, posts it (the
 * elements put, as many as were put) and then completes the put (ExecOp::reply()).
 * Commands on stdin (post NAME COUNT PERIOD_MS, ship, exit), events on fd 3. Posting runs on the
 * main thread, paced on the monotonic clock from the first post; the wall clock taken just before
 * each SharedPV::post() is both the update's timeStamp and the kept post time. The wheel's libpvxs
 * is built with the old C++ string ABI: compile with -D_GLIBCXX_USE_CXX11_ABI=0
 * (src/toolchains/cxxlib.ts does).
 */
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <pvxs/data.h>
#include <pvxs/nt.h>
#include <pvxs/server.h>
#include <pvxs/sharedArray.h>
#include <pvxs/sharedpv.h>
#include <pvxs/version.h>

using namespace pvxs;

namespace {

const long MAX_COUNT = 127; /* so that k fits an int8 */

#include "epicsperf_events.inc.cpp"

/* A whole decimal number in [lo, hi], else -1. */
long parse_long(const std::string &s, long lo, long hi) {
    if (s.empty()) return -1;
    char *end = nullptr;
    errno = 0;
    long v = strtol(s.c_str(), &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    return v;
}

std::vector<long> parse_sizes(const char *flag, const std::string &arg) {
    std::vector<long> out;
    std::stringstream ss(arg);
    std::string item;
    while (std::getline(ss, item, ',')) {
        long v = parse_long(item, 1, 100000000L);
        if (v < 1) fail(2, "%s takes positive numbers separated by commas, got '%s'", flag, arg.c_str());
        out.push_back(v);
    }
    return out;
}

enum class PvKind { Double, Int32, Bytes };

struct Pv {
    PvKind kind;
    size_t elements; /* arrays */
    server::SharedPV shared;
    Value prototype; /* the opened value, for cloneEmpty() */
};

void stamp(Value &v, const struct timespec &ts) {
    v["timeStamp.secondsPastEpoch"] = int64_t(ts.tv_sec);
    v["timeStamp.nanoseconds"] = int32_t(ts.tv_nsec);
}

Value initial_value(PvKind kind, size_t n, bool array = false) {
    Value v;
    switch (kind) {
    case PvKind::Double:
        if (array) {
            v = nt::NTScalar{TypeCode::Float64A}.create();
            v["value"] = shared_array<const double>(shared_array<double>(n, 0.0).freeze());
        } else {
            v = nt::NTScalar{TypeCode::Float64}.create();
            v["value"] = 0.0;
        }
        break;
    case PvKind::Int32:
        v = nt::NTScalar{TypeCode::Int32A}.create();
        v["value"] = shared_array<const int32_t>(shared_array<int32_t>(n, 0).freeze());
        break;
    case PvKind::Bytes:
        v = nt::NTScalar{TypeCode::Int8A}.create();
        v["value"] = shared_array<const int8_t>(shared_array<int8_t>(n, 0).freeze());
        break;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    stamp(v, ts);
    return v;
}

struct Runner {
    server::Server srv;
    std::map<std::string, Pv> pvs;
    std::vector<server::SharedPV> latency; /* the round-trip PVs of --latency */
    std::vector<double> posts; /* (k, wall clock) pairs since the last ship */

    void add(const std::string &name, PvKind kind, size_t n) {
        if (pvs.count(name)) return; /* a size given twice */
        Pv pv{kind, n, server::SharedPV::buildReadonly(), initial_value(kind, n)};
        pv.shared.open(pv.prototype);
        srv.addPV(name, pv.shared);
        pvs.emplace(name, std::move(pv));
    }

    /* A round-trip PV of --latency: an array of up to `most` elements (one element 0 at start)
     * whose puts are posted by the app's put handler. Not a target of `post`. */
    void add_latency(const std::string &name, PvKind kind, size_t most) {
        server::SharedPV shared(server::SharedPV::buildMailbox());
        shared.onPut([most](server::SharedPV &pv, std::unique_ptr<server::ExecOp> &&op, Value &&top) {
            Value value(top["value"]);
            if (value.isMarked()) {
                size_t n = value.as<shared_array<const void>>().size();
                if (n > most) {
                    op->error("at most " + std::to_string(most) + " elements");
                    return;
                }
            }
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            stamp(top, now);
            pv.post(top);
            op->reply();
        });
        shared.open(initial_value(kind, 1, true));
        srv.addPV(name, shared);
        latency.push_back(shared);
    }

    void post(const std::string &name, long count, double period_ms) {
        auto it = pvs.find(name);
        if (it == pvs.end()) fail(2, "post: no PV named %s", name.c_str());
        Pv &pv = it->second;
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        const int64_t period_ns = int64_t(period_ms * 1e6 + 0.5);
        for (long k = 1; k <= count; k++) {
            Value v = pv.prototype.cloneEmpty();
            switch (pv.kind) {
            case PvKind::Double: v["value"] = double(k); break;
            case PvKind::Int32:
                v["value"] = shared_array<const int32_t>(shared_array<int32_t>(pv.elements, int32_t(k)).freeze());
                break;
            case PvKind::Bytes:
                v["value"] = shared_array<const int8_t>(shared_array<int8_t>(pv.elements, int8_t(k)).freeze());
                break;
            }
            if (k > 1 && period_ns > 0) {
                int64_t at = int64_t(start.tv_nsec) + (k - 1) * period_ns;
                struct timespec due;
                due.tv_sec = start.tv_sec + time_t(at / 1000000000);
                due.tv_nsec = long(at % 1000000000);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr) == EINTR) {}
            }
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            stamp(v, now);
            pv.shared.post(v);
            posts.push_back(double(k));
            posts.push_back(double(now.tv_sec) + double(now.tv_nsec) * 1e-9);
        }
        emit("{\"ev\":\"posted\",\"name\":" + json_string(name) + ",\"count\":" + std::to_string(count) + "}\n");
    }

    void ship() {
        /* little-endian host (x86-64, aarch64): the doubles' memory order is the payload's */
        size_t count = posts.size() / 2, bytes = posts.size() * sizeof(double);
        emit("{\"ev\":\"posts\",\"count\":" + std::to_string(count) + ",\"bytes\":" + std::to_string(bytes) + "}\n",
             posts.data(), bytes);
        posts.clear();
    }
};

/* Commands until exit or EOF; a bad one is an error (exit 2). */
void serve(Runner &r) {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::vector<std::string> words;
        std::string w;
        while (in >> w) words.push_back(w);
        if (words.empty()) continue;
        if (words[0] == "exit" && words.size() == 1) return;
        if (words[0] == "ship" && words.size() == 1) { r.ship(); continue; }
        if (words[0] == "post" && words.size() == 4) {
            long count = parse_long(words[2], 0, MAX_COUNT);
            if (count < 0) fail(2, "post: COUNT must be 0 to %ld, got '%s'", MAX_COUNT, words[2].c_str());
            char *end = nullptr;
            double period = strtod(words[3].c_str(), &end);
            if (*end || !(period >= 0 && period <= 3.6e6))
                fail(2, "post: PERIOD_MS must be a number of milliseconds, got '%s'", words[3].c_str());
            r.post(words[1], count, period);
            continue;
        }
        fail(2, "unknown command '%s'", line.c_str());
    }
}

} // namespace

int main(int argc, char **argv) {
    if (fcntl(EVENTS_FD, F_GETFD) == -1) {
        fprintf(stderr, "epicsperf-pvxs-server: fd 3 is not open (the orchestrator opens it)\n");
        return 2;
    }
    if (argc < 2 || std::string(argv[1]) != "serve")
        fail(2, "usage: epicsperf-pvxs-server serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]");
    std::string prefix;
    bool have_prefix = false;
    std::vector<long> int32s, bytes;
    long latency = 0; /* none */
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--prefix" && i + 1 < argc) { prefix = argv[++i]; have_prefix = true; }
        else if (a == "--int32" && i + 1 < argc) int32s = parse_sizes("--int32", argv[++i]);
        else if (a == "--bytes" && i + 1 < argc) bytes = parse_sizes("--bytes", argv[++i]);
        else if (a == "--latency" && i + 1 < argc) {
            latency = parse_long(argv[++i], 1, 100000000L);
            if (latency < 1) fail(2, "--latency takes a whole number of elements from 1, got '%s'", argv[i]);
        }
        else fail(2, "unknown argument %s", a.c_str());
    }
    if (!have_prefix) fail(2, "--prefix P is required");
    try {
        server::Config config = server::Config::fromEnv();
        Runner r{config.build(), {}, {}, {}};
        /* pvxs falls back to another TCP port when the one asked for is taken: the orchestrator
         * gave this one, so serve on it or not at all. */
        if (config.tcp_port && r.srv.config().tcp_port != config.tcp_port)
            fail(1, "the PVA server port %u is in use", unsigned(config.tcp_port));
        r.add(prefix + "CROSS:DOUBLE", PvKind::Double, 1);
        for (long n : int32s) r.add(prefix + "CROSS:INT32:" + std::to_string(n), PvKind::Int32, size_t(n));
        for (long m : bytes) r.add(prefix + "CROSS:BYTES:" + std::to_string(m), PvKind::Bytes, size_t(m));
        if (latency > 0) {
            r.add_latency(prefix + "LATENCY:DOUBLE", PvKind::Double, size_t(latency));
            r.add_latency(prefix + "LATENCY:CHAR", PvKind::Bytes, size_t(latency));
        }
        r.srv.start();
        emit("{\"ev\":\"ready\",\"server\":\"pvxs\",\"version\":" + json_string(version_str()) + "}\n");
        serve(r);
        r.srv.stop();
        for (auto &e : r.pvs) e.second.shared.close();
        for (auto &pv : r.latency) pv.close();
    } catch (std::exception &e) {
        fail(1, "%s", e.what());
    }
    _exit(0);
}
