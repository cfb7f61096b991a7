/* epicsperf-pvxs-server: the pvxs server runner (docs/runners.md, "Server runners").
 *
 *   epicsperf-pvxs-server serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]
 *       [--counters N] [--counter-rate HZ]
 *
 * One pvxs server from the EPICS_PVAS_* / EPICS_PVA_* environment (PV Access only), publishing
 * <P>CROSS:DOUBLE (NTScalar double), <P>CROSS:INT32:<n> (NTScalar int32[n]) and
 * <P>CROSS:BYTES:<m> (NTScalar int8[m]), each a read-only server::SharedPV opened at 0.
 * With --latency N also <P>LATENCY:DOUBLE (NTScalar double[]) and <P>LATENCY:CHAR (NTScalar
 * int8[]), opened as one element 0, whose SharedPV::onPut handler (on a pvxs server worker)
 * refuses more than N elements, else stamps the value put with the wall clock, posts it (the
 * elements put, as many as were put) and then completes the put (ExecOp::reply()).
 * With --counters N also the counters <P>CALC1..<P>CALCN (NTScalar double with alarm and
 * timeStamp), read-only SharedPVs opened at 1 with the start time, every value in MINOR alarm
 * (alarm.severity 1, alarm.status 1 DEVICE, alarm.message "HIGH", as QSRV sends a HIGH alarm).
 * With --counter-rate HZ > 0 a ticker thread ticks on an absolute schedule on the monotonic
 * clock, tick j at t0 + j/HZ (a late tick runs at once, none skipped; more than 1 s behind, the
 * schedule starts again from now): it adds 1 to the common value, reads the wall clock once and
 * posts every counter in order (a cloneEmpty() with value, alarm and timeStamp, SharedPV::post()),
 * then counts the tick (ticks, its wall clock, the value) for `stats`.
 * With counters also <P>RAMP, a SharedPV like them (1, MINOR, the start time), the load workload's
 * fairness PV, posted by a ramp thread of its own (not the ticker): still until `ramp HZ` (0 to
 * 5000) gives it a rate, then post j at t_cmd + j/HZ on the monotonic clock from that command
 * (a late post runs at once, none skipped; more than 1 s behind, the schedule starts again from
 * now), each adding 1 to its value, stamped with the wall clock read at that post; HZ 0 stills it.
 * The thread sleeps on a condition variable, woken at a rate change and at exit; it posts holding
 * the ramp lock, so that once `ramped` is written no post of the rate before is started.
 * Commands on stdin (post NAME COUNT PERIOD_MS, ship, ramp HZ, stats, exit), events on fd 3 (from
 * any thread, under a lock). The main thread reads the commands and answers `stats` and `ramp` at
 * once; post and ship run in order on a poster thread, posting paced on the monotonic clock from
 * the first post; the wall clock taken just before each SharedPV::post() is both the update's
 * timeStamp and the kept post time. `exit` (or the end of stdin) lets the poster finish the
 * commands before it, stops the ticker (at once, also mid-tick), the ramp thread and the server.
 * The wheel's libpvxs is built with the old C++ string ABI: compile with
 * -D_GLIBCXX_USE_CXX11_ABI=0 (src/toolchains/cxxlib.ts does).
 */
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
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
const long MAX_COUNTERS = 10000000;

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

double posix_seconds(const struct timespec &ts) {
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct Runner {
    server::Server srv;
    std::map<std::string, Pv> pvs;
    std::vector<server::SharedPV> latency; /* the round-trip PVs of --latency */
    std::vector<double> posts; /* (k, wall clock) pairs since the last ship (the poster's) */

    std::vector<server::SharedPV> counters; /* <P>CALC1..N of --counters */
    Value counter_prototype; /* for cloneEmpty() */
    /* The last completed tick, for `stats`. */
    std::mutex ticked_lock;
    uint64_t ticks = 0;
    double tick_time = 0; /* POSIX s, 0 before any tick */
    double counter_value = 1;
    /* The ticker of --counter-rate and how it is stopped. */
    std::thread ticker;
    std::mutex ticker_lock;
    std::condition_variable ticker_wake;
    std::atomic<bool> ticker_stop{false};

    /* <P>RAMP of --counters and its thread. The schedule (rate, start, generation) and the stop
     * flag are under ramp_lock, held by the ramp thread while it posts; a command that wants the
     * lock raises ramp_waiting first, and the ramp thread, seeing it after a post, waits on the
     * condition variable (letting go of the lock) until it is down again. */
    bool has_ramp = false;
    server::SharedPV ramp_pv;
    std::atomic<double> ramp_value{1}; /* for `stats` */
    std::thread ramper;
    std::mutex ramp_lock;
    std::condition_variable ramp_wake;
    std::atomic<int> ramp_waiting{0};
    double ramp_hz = 0; /* 0: still */
    std::chrono::steady_clock::time_point ramp_t0;
    uint64_t ramp_generation = 0;
    bool ramp_stop = false;

    explicit Runner(server::Server &&s) : srv(std::move(s)) {}

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

    /* A counter's update: the value, in MINOR alarm (HIGH, as QSRV sends it), stamped. */
    Value counter_update(double value, const struct timespec &ts) const {
        Value v = counter_prototype.cloneEmpty();
        v["value"] = value;
        v["alarm.severity"] = int32_t(1);
        v["alarm.status"] = int32_t(1); /* DEVICE */
        v["alarm.message"] = "HIGH";
        stamp(v, ts);
        return v;
    }

    /* <P>CALC1..<P>CALCn, opened at 1 with the start time as their first timestamp. */
    void add_counters(const std::string &prefix, long n) {
        struct timespec start;
        clock_gettime(CLOCK_REALTIME, &start);
        counter_prototype = nt::NTScalar{TypeCode::Float64}.create();
        Value initial = counter_update(1.0, start);
        counters.reserve(size_t(n));
        for (long i = 1; i <= n; i++) {
            server::SharedPV shared(server::SharedPV::buildReadonly());
            shared.open(initial); /* a clone of it */
            srv.addPV(prefix + "CALC" + std::to_string(i), shared);
            counters.push_back(shared);
        }
        ramp_pv = server::SharedPV::buildReadonly();
        ramp_pv.open(initial);
        srv.addPV(prefix + "RAMP", ramp_pv);
        has_ramp = true;
    }

    /* The ramp thread: still until a `ramp` command gives a rate; then post j at t0 + j/hz on the
     * monotonic clock from that command (a late post runs at once, none skipped; more than 1 s
     * behind, the schedule starts again from now), a new command restarting it. */
    void ramp_run() {
        typedef std::chrono::steady_clock Clock;
        double value = 1;
        uint64_t seen = 0;
        double hz = 0;
        Clock::time_point t0;
        uint64_t j = 0; /* posts done on this schedule */
        std::unique_lock<std::mutex> g(ramp_lock);
        for (;;) {
            if (ramp_waiting.load()) {
                ramp_wake.wait(g, [this]() { return ramp_waiting.load() == 0 || ramp_stop; });
            }
            if (ramp_stop) return;
            if (ramp_generation != seen) {
                seen = ramp_generation;
                hz = ramp_hz;
                t0 = ramp_t0;
                j = 0;
            }
            if (hz <= 0) {
                ramp_wake.wait(g);
                continue;
            }
            double offset_ns = double(j + 1) * 1e9 / hz;
            if (offset_ns > 1e17) { /* years away: still, in effect */
                ramp_wake.wait(g);
                continue;
            }
            Clock::time_point due = t0 + std::chrono::nanoseconds(int64_t(std::llround(offset_ns)));
            Clock::time_point now = Clock::now();
            if (now < due) {
                ramp_wake.wait_until(g, due);
                continue;
            }
            j++;
            if (now - due > std::chrono::seconds(1)) { t0 = now; j = 0; }
            value += 1;
            struct timespec wall;
            clock_gettime(CLOCK_REALTIME, &wall);
            ramp_pv.post(counter_update(value, wall));
            ramp_value.store(value);
        }
    }

    void start_ramp() {
        ramper = std::thread([this]() {
            try {
                ramp_run();
            } catch (std::exception &e) {
                fail(1, "%s", e.what());
            }
        });
    }

    /* Runs fn under ramp_lock, between two posts of the ramp thread, then wakes it. */
    template <typename F> void with_ramp_lock(F fn) {
        ramp_waiting++;
        {
            std::lock_guard<std::mutex> g(ramp_lock);
            fn();
            ramp_waiting--;
        }
        ramp_wake.notify_all();
    }

    /* `ramp HZ`: in effect (and answered) before it returns, whatever the poster is doing. */
    void set_ramp(double hz) {
        with_ramp_lock([this, hz]() {
            ramp_hz = hz;
            ramp_t0 = std::chrono::steady_clock::now();
            ramp_generation++;
        });
    }

    void stop_ramp() {
        if (!ramper.joinable()) return;
        with_ramp_lock([this]() { ramp_stop = true; });
        ramper.join();
    }

    /* The ticker thread: tick j at t0 + j/hz on the monotonic clock (steady_clock); a late tick
     * runs at once, none skipped; more than 1 s behind, the schedule starts again from now. */
    void tick_at(double hz) {
        typedef std::chrono::steady_clock Clock;
        Clock::time_point t0 = Clock::now();
        double value = 1;
        for (uint64_t j = 1;; j++) {
            Clock::time_point due = t0 + std::chrono::nanoseconds(int64_t(std::llround(double(j) * 1e9 / hz)));
            {
                std::unique_lock<std::mutex> g(ticker_lock);
                while (!ticker_stop.load() && Clock::now() < due) ticker_wake.wait_until(g, due);
            }
            if (ticker_stop.load()) return;
            if (Clock::now() - due > std::chrono::seconds(1)) { t0 = Clock::now(); j = 0; }
            value += 1;
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            for (auto &c : counters) {
                if (ticker_stop.load(std::memory_order_relaxed)) return;
                c.post(counter_update(value, now));
            }
            std::lock_guard<std::mutex> g(ticked_lock);
            ticks++;
            tick_time = posix_seconds(now);
            counter_value = value;
        }
    }

    void start_ticker(double hz) {
        ticker = std::thread([this, hz]() {
            try {
                tick_at(hz);
            } catch (std::exception &e) {
                fail(1, "%s", e.what());
            }
        });
    }

    void stop_ticker() {
        {
            std::lock_guard<std::mutex> g(ticker_lock);
            ticker_stop = true;
        }
        ticker_wake.notify_all();
        if (ticker.joinable()) ticker.join();
    }

    /* Answered on the thread reading the commands, whatever the poster and the ticker are doing. */
    void stats() {
        uint64_t t;
        double at, value;
        {
            std::lock_guard<std::mutex> g(ticked_lock);
            t = ticks;
            at = tick_time;
            value = counter_value;
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        char ramp[64] = "";
        if (has_ramp) snprintf(ramp, sizeof ramp, ",\"rampValue\":%.17g", ramp_value.load());
        char line[320];
        snprintf(line, sizeof line, "{\"ev\":\"stats\",\"ticks\":%llu,\"tickTime\":%.6f,\"counterValue\":%.17g%s,\"time\":%.6f}\n",
                 (unsigned long long)t, at, value, ramp, posix_seconds(now));
        emit(line);
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
            posts.push_back(posix_seconds(now));
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

/* post and ship, run in the order given on the poster thread, so that `stats` is answered while
 * a post is under way. */
struct Job {
    bool ship;
    std::string name;
    long count;
    double period_ms;
};

struct Poster {
    Runner &r;
    std::mutex lock;
    std::condition_variable wake;
    std::deque<Job> jobs;
    bool closed = false;
    std::thread thread;

    explicit Poster(Runner &runner) : r(runner) {
        thread = std::thread([this]() {
            try {
                run();
            } catch (std::exception &e) {
                fail(1, "%s", e.what());
            }
        });
    }

    void push(Job &&job) {
        {
            std::lock_guard<std::mutex> g(lock);
            jobs.push_back(std::move(job));
        }
        wake.notify_one();
    }

    /* Finishes the jobs given, then returns. */
    void finish() {
        {
            std::lock_guard<std::mutex> g(lock);
            closed = true;
        }
        wake.notify_one();
        thread.join();
    }

    void run() {
        for (;;) {
            Job job;
            {
                std::unique_lock<std::mutex> g(lock);
                while (jobs.empty() && !closed) wake.wait(g);
                if (jobs.empty()) return;
                job = std::move(jobs.front());
                jobs.pop_front();
            }
            if (job.ship) r.ship();
            else r.post(job.name, job.count, job.period_ms);
        }
    }
};

/* A decimal number (digits, at most one point; no sign or exponent) in [0, hi], else -1. */
double parse_rate(const std::string &s, double hi) {
    size_t digits = 0, points = 0;
    for (char c : s) {
        if (c >= '0' && c <= '9') digits++;
        else if (c == '.') points++;
        else return -1;
    }
    if (digits == 0 || points > 1) return -1;
    double v = strtod(s.c_str(), nullptr);
    return v >= 0 && v <= hi ? v : -1;
}

/* A JSON number, the shortest that reads back as v. */
std::string json_number(double v) {
    char b[32];
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        snprintf(b, sizeof b, "%.0f", v);
        return b;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, v);
        if (strtod(b, nullptr) == v) break;
    }
    return b;
}

/* Commands until exit or EOF, then the poster finishes those before; a bad one is an error (exit 2). */
void serve(Runner &r) {
    Poster poster(r);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::vector<std::string> words;
        std::string w;
        while (in >> w) words.push_back(w);
        if (words.empty()) continue;
        if (words[0] == "exit" && words.size() == 1) break;
        if (words[0] == "stats" && words.size() == 1) { r.stats(); continue; }
        if (words[0] == "ramp") {
            if (!r.has_ramp) fail(2, "ramp: there is no RAMP PV without --counters");
            double hz = words.size() == 2 ? parse_rate(words[1], 5000) : -1;
            if (words.size() != 2) fail(2, "ramp takes one rate, HZ: '%s'", line.c_str());
            if (hz < 0) fail(2, "ramp: HZ must be a number from 0 to 5000, got '%s'", words[1].c_str());
            r.set_ramp(hz);
            emit("{\"ev\":\"ramped\",\"hz\":" + json_number(hz) + "}\n");
            continue;
        }
        if (words[0] == "ship" && words.size() == 1) { poster.push(Job{true, std::string(), 0, 0}); continue; }
        if (words[0] == "post" && words.size() == 4) {
            if (!r.pvs.count(words[1])) fail(2, "post: no PV named %s", words[1].c_str());
            long count = parse_long(words[2], 0, MAX_COUNT);
            if (count < 0) fail(2, "post: COUNT must be 0 to %ld, got '%s'", MAX_COUNT, words[2].c_str());
            char *end = nullptr;
            double period = strtod(words[3].c_str(), &end);
            if (*end || !(period >= 0 && period <= 3.6e6))
                fail(2, "post: PERIOD_MS must be a number of milliseconds, got '%s'", words[3].c_str());
            poster.push(Job{false, words[1], count, period});
            continue;
        }
        fail(2, "unknown command '%s'", line.c_str());
    }
    poster.finish();
}

} // namespace

int main(int argc, char **argv) {
    if (fcntl(EVENTS_FD, F_GETFD) == -1) {
        fprintf(stderr, "epicsperf-pvxs-server: fd 3 is not open (the orchestrator opens it)\n");
        return 2;
    }
    if (argc < 2 || std::string(argv[1]) != "serve")
        fail(2, "usage: epicsperf-pvxs-server serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]"
                " [--counters N] [--counter-rate HZ]");
    std::string prefix;
    bool have_prefix = false;
    std::vector<long> int32s, bytes;
    long latency = 0; /* none */
    long counters = 0;
    double counter_rate = 0; /* still */
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--prefix" && i + 1 < argc) { prefix = argv[++i]; have_prefix = true; }
        else if (a == "--int32" && i + 1 < argc) int32s = parse_sizes("--int32", argv[++i]);
        else if (a == "--bytes" && i + 1 < argc) bytes = parse_sizes("--bytes", argv[++i]);
        else if (a == "--latency" && i + 1 < argc) {
            latency = parse_long(argv[++i], 1, 100000000L);
            if (latency < 1) fail(2, "--latency takes a whole number of elements from 1, got '%s'", argv[i]);
        }
        else if (a == "--counters" && i + 1 < argc) {
            counters = parse_long(argv[++i], 0, MAX_COUNTERS);
            if (counters < 0) fail(2, "--counters takes a whole number from 0 to %ld, got '%s'", MAX_COUNTERS, argv[i]);
        }
        else if (a == "--counter-rate" && i + 1 < argc) {
            const char *hz = argv[++i];
            char *end = nullptr;
            counter_rate = strtod(hz, &end);
            if ((!(*hz >= '0' && *hz <= '9') && *hz != '.') || strpbrk(hz, "xX")) end = nullptr; /* no sign, hex, inf, nan */
            if (!end || end == hz || *end || !(counter_rate >= 0 && counter_rate <= 1e6))
                fail(2, "--counter-rate takes a number of Hz from 0, got '%s'", hz);
        }
        else fail(2, "unknown argument %s", a.c_str());
    }
    if (!have_prefix) fail(2, "--prefix P is required");
    try {
        server::Config config = server::Config::fromEnv();
        Runner r(config.build());
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
        if (counters > 0) r.add_counters(prefix, counters);
        r.srv.start();
        if (counters > 0 && counter_rate > 0) r.start_ticker(counter_rate);
        if (r.has_ramp) r.start_ramp();
        emit("{\"ev\":\"ready\",\"server\":\"pvxs\",\"version\":" + json_string(version_str()) + "}\n");
        serve(r);
        r.stop_ticker();
        r.stop_ramp();
        r.srv.stop();
        for (auto &e : r.pvs) e.second.shared.close();
        for (auto &pv : r.latency) pv.close();
        for (auto &pv : r.counters) pv.close();
        if (r.has_ramp) r.ramp_pv.close();
    } catch (std::exception &e) {
        fail(1, "%s", e.what());
    }
    _exit(0);
}
