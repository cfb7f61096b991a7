/* The runners' events on fd 3 (docs/runners.md): JSON lines, each followed by its payload, from
 * any thread; a failure's one line, and the exit. Included inside a runner's anonymous namespace
 * (epicsperf_pvxs.cpp, epicsperf_pvxs_server.cpp), after the standard headers. */

const int EVENTS_FD = 3;
std::mutex out_lock;

void write_all(const void *buf, size_t len) {
    const char *p = static_cast<const char *>(buf);
    while (len > 0) {
        ssize_t n = ::write(EVENTS_FD, p, len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            _exit(1);
        }
        p += n;
        len -= size_t(n);
    }
}

void emit(const std::string &line, const void *payload = nullptr, size_t len = 0) {
    std::lock_guard<std::mutex> g(out_lock);
    write_all(line.data(), line.size());
    if (payload && len) write_all(payload, len);
}

std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { out += '\\'; out += char(c); }
        else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); out += b; }
        else out += char(c);
    }
    return out + "\"";
}

[[noreturn]] void fail(int code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++) if (*c == '\n') *c = ' ';
    emit("{\"ev\":\"error\",\"message\":" + json_string(msg) + "}\n");
    _exit(code);
}
