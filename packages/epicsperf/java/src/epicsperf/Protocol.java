package epicsperf;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The runner's side of the protocol of docs/runners.md, shared by the Java runners: the arguments,
 * the commands on stdin, the events on fd 3, the in-memory sample store and its 32-byte
 * little-endian records, the array checks, and the array-put and latency loops (the libraries'
 * parts are interfaces the runners implement). JDK only.
 */
final class Protocol {
    private Protocol() {}

    static final int SAMPLE_BYTES = 32;
    /** POSIX seconds at the EPICS epoch (1990-01-01). */
    static final long EPICS_EPOCH = 631152000L;

    // ---- arguments ---------------------------------------------------------------------------

    static final class Args {
        String task;
        List<String> names = List.of();
        double timeoutMs = -1;
        int samples;
        boolean checkAll;
        boolean noCallback;
        int elements;
        String type = "double";
        int[] sizes = new int[0];
    }

    static Args parse(String[] argv) {
        if (argv.length < 1) fail(2, "usage: <runner> snapshot|monitor|array|array-put|latency --names FILE ...");
        Args a = new Args();
        a.task = argv[0];
        String namesFile = null;
        for (int i = 1; i < argv.length; i++) {
            String s = argv[i];
            boolean more = i + 1 < argv.length;
            switch (s) {
                case "--names" -> { if (more) namesFile = argv[++i]; }
                case "--timeout-ms" -> { if (more) a.timeoutMs = number(argv[++i], s); }
                case "--samples" -> { if (more) a.samples = (int) number(argv[++i], s); }
                case "--elements" -> { if (more) a.elements = (int) number(argv[++i], s); }
                case "--type" -> { if (more) a.type = argv[++i]; }
                case "--check-all" -> a.checkAll = true;
                case "--no-callback" -> a.noCallback = true;
                case "--sizes" -> {
                    if (more) {
                        String list = argv[++i];
                        try {
                            a.sizes = Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
                        } catch (NumberFormatException e) {
                            fail(2, "--sizes must be positive numbers, got " + list);
                        }
                        if (a.sizes.length == 0 || Arrays.stream(a.sizes).anyMatch(v -> v < 1))
                            fail(2, "--sizes must be positive numbers, got " + list);
                    }
                }
                default -> fail(2, "unknown argument " + s);
            }
        }
        if (namesFile == null) fail(2, "--names FILE is required");
        if (a.task.equals("snapshot") && a.timeoutMs < 0) fail(2, "snapshot: --timeout-ms N is required");
        if (!a.task.equals("snapshot") && a.samples < 1) fail(2, a.task + ": --samples N (at least 1) is required");
        if (a.task.equals("array-put") && a.elements < 1) fail(2, "array-put: --elements N is required");
        if (a.task.equals("latency") && a.sizes.length == 0) fail(2, "latency: --sizes N,N,... is required");
        try {
            List<String> names = new ArrayList<>();
            for (String line : Files.readAllLines(Path.of(namesFile), StandardCharsets.UTF_8))
                if (!line.isBlank()) names.add(line.strip());
            a.names = names;
        } catch (IOException e) {
            fail(2, "cannot read --names " + namesFile + ": " + e.getMessage());
        }
        boolean one = a.task.equals("array") || a.task.equals("array-put") || a.task.equals("latency");
        if (one && a.names.size() != 1) fail(2, a.task + ": --names must hold one name, it holds " + a.names.size());
        return a;
    }

    private static double number(String s, String option) {
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            fail(2, option + " takes a number, got " + s);
            return 0;
        }
    }

    // ---- events (fd 3) and commands (stdin) --------------------------------------------------

    private static OutputStream events;

    /**
     * fd 3 as a stream. The orchestrator's fd 3 is one end of a socket pair (Node's stdio pipes),
     * which /proc/self/fd/3 cannot reopen (ENXIO), so the descriptor itself is wrapped: that needs
     * java.io opened to this code (the command line's --add-opens, src/toolchains/jvm.ts). Without
     * it the path is tried, which serves a pipe or a file (a runner started by hand).
     */
    static void openEvents() {
        try {
            FileDescriptor fd = new FileDescriptor();
            Field f = FileDescriptor.class.getDeclaredField("fd");
            f.setAccessible(true);
            f.setInt(fd, 3);
            events = new FileOutputStream(fd);
            return;
        } catch (ReflectiveOperationException | RuntimeException e) {
            // not opened to us: try the path
        }
        try {
            events = new FileOutputStream("/proc/self/fd/3", true);
        } catch (IOException e) {
            System.err.println("epicsperf java runner: fd 3 is not open or cannot be reopened (the orchestrator opens it): " + e.getMessage());
            Runtime.getRuntime().halt(2);
        }
    }

    static void emit(String line) {
        emit(line, null);
    }

    /** One JSON event line, then its payload (whose length the line gives). */
    static void emit(String line, byte[] payload) {
        synchronized (Protocol.class) {
            try {
                events.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                if (payload != null) events.write(payload);
                events.flush();
            } catch (IOException e) {
                Runtime.getRuntime().halt(1); // the orchestrator is gone
            }
        }
    }

    /** Write the error event and exit at once with `code`. */
    static void fail(int code, String message) {
        String line = "{\"ev\":\"error\",\"message\":" + json(message.replaceAll("\\s+", " ").strip()) + "}";
        if (events != null) emit(line);
        else System.err.println(line);
        Runtime.getRuntime().halt(code);
    }

    private static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    /** Wait for the next command word; EOF means the orchestrator is gone: exit at once. */
    static void expect(String word) {
        for (;;) {
            String line;
            try {
                line = STDIN.readLine();
            } catch (IOException e) {
                line = null;
            }
            if (line == null) Runtime.getRuntime().halt(0);
            line = line.strip();
            if (line.isEmpty()) continue;
            if (!line.equals(word)) fail(2, "expected '" + word + "', got '" + line + "'");
            return;
        }
    }

    static void ready(String client, String version) {
        emit("{\"ev\":\"ready\",\"client\":" + json(client) + ",\"version\":" + json(version) + "}");
    }

    /** The version of a library jar on the class path, from its Maven pom.properties. */
    static String libraryVersion(Class<?> of, String group, String artifact) {
        try (InputStream in = of.getResourceAsStream("/META-INF/maven/" + group + "/" + artifact + "/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "?");
            }
        } catch (IOException e) {
            // fall through
        }
        String v = of.getPackage().getImplementationVersion();
        return v != null ? v : "?";
    }

    // ---- values ------------------------------------------------------------------------------

    /** The wall clock in POSIX seconds (microseconds on Linux). */
    static double wallNow() {
        Instant t = Instant.now();
        return t.getEpochSecond() + t.getNano() * 1e-9;
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String json(double v) {
        if (!Double.isFinite(v)) return "null";
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return Double.toString(v);
    }

    static String ok(String value, int severity, int status, double stamp, double elapsedMs) {
        return "{\"ok\":true,\"value\":" + value + ",\"severity\":" + severity + ",\"status\":" + status
            + ",\"timestamp\":" + json(stamp) + ",\"elapsedMs\":" + json(elapsedMs) + "}";
    }

    static String failed(String error, double elapsedMs) {
        return "{\"ok\":false,\"error\":" + json(error) + ",\"elapsedMs\":" + json(elapsedMs) + "}";
    }

    /** Milliseconds since t0 (System.nanoTime), to the microsecond. */
    static double elapsedMs(long t0) {
        return Math.round((System.nanoTime() - t0) / 1e3) / 1e3;
    }

    /** Nanoseconds left of a timeout that started at t0 (System.nanoTime): each PV's timeout runs from the snapshot's start. */
    static long leftNs(long t0, double timeoutMs) {
        return Math.max(0, t0 + (long) (timeoutMs * 1e6) - System.nanoTime());
    }

    /** The snapshot's results event: one entry per name, in order. */
    static void shipResults(String[] entries) {
        expect("ship");
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < entries.length; i++) b.append(i == 0 ? "" : ",").append(entries[i]);
        byte[] body = b.append(']').toString().getBytes(StandardCharsets.UTF_8);
        emit("{\"ev\":\"results\",\"bytes\":" + body.length + "}", body);
    }

    /** epicsAlarmConditionStrings: QSRV sends the CA alarm status as alarm.message. */
    private static final List<String> CA_STATUS = List.of("NO_ALARM", "READ", "WRITE", "HIHI", "HIGH", "LOLO", "LOW",
        "STATE", "COS", "COMM", "TIMEOUT", "HWLIMIT", "CALC", "SCAN", "LINK", "SOFT", "BAD_SUB", "UDF", "DISABLE", "SIMM",
        "READ_ACCESS", "WRITE_ACCESS");

    /** The CA alarm status a PVA alarm.message names, else the PVA status. */
    static int caStatus(String message, int fallback) {
        int i = message == null ? -1 : CA_STATUS.indexOf(message);
        return i >= 0 ? i : fallback;
    }

    // ---- samples -----------------------------------------------------------------------------

    /**
     * The first `perPv` updates of each PV, in preallocated arrays. add() is called from the
     * library's callbacks; it writes `connected` when every PV has its first update and `complete`
     * when every PV has its samples, then ignores further updates (with events=false it only
     * stores: the put tasks write those events themselves).
     */
    static final class Samples {
        final int count;
        final int perPv;
        private final boolean events;
        private final int[] counts;
        private final short[] severity;
        private final short[] status;
        private final double[] value;
        private final double[] stamp;
        private final double[] received;
        private int started;
        private int finished;
        private boolean closed;
        /** The array task: the length of the last update, for `complete`. */
        volatile int elements = -1;

        Samples(int count, int perPv, boolean events) {
            this.count = count;
            this.perPv = perPv;
            this.events = events;
            int n = count * perPv;
            counts = new int[count];
            severity = new short[n];
            status = new short[n];
            value = new double[n];
            stamp = new double[n];
            received = new double[n];
            if (events && count == 0) {
                emit("{\"ev\":\"connected\",\"count\":0}");
                emit("{\"ev\":\"complete\"}");
            }
        }

        synchronized void add(int i, int sev, int stat, double v, double ts, double rx) {
            int c = counts[i];
            if (c >= perPv || closed) return;
            int k = i * perPv + c;
            severity[k] = (short) sev;
            status[k] = (short) stat;
            value[k] = v;
            stamp[k] = ts;
            received[k] = rx;
            counts[i] = c + 1;
            if (!events) return;
            if (c == 0 && ++started == count) emit("{\"ev\":\"connected\",\"count\":" + count + "}");
            if (c + 1 == perPv && ++finished == count)
                emit(elements >= 0 ? "{\"ev\":\"complete\",\"elements\":" + elements + "}" : "{\"ev\":\"complete\"}");
        }

        /** After `ship`: stop storing, then write every stored sample, grouped by PV. */
        void ship() {
            expect("ship");
            int total = 0;
            synchronized (this) {
                closed = true;
                for (int c : counts) total += c;
            }
            ByteBuffer out = ByteBuffer.allocate(total * SAMPLE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < count; i++)
                for (int c = 0; c < counts[i]; c++) {
                    int k = i * perPv + c;
                    out.putInt(i).putShort(severity[k]).putShort(status[k]);
                    out.putDouble(value[k]).putDouble(stamp[k]).putDouble(received[k]);
                }
            emit("{\"ev\":\"samples\",\"count\":" + total + ",\"bytes\":" + out.capacity() + "}", out.array());
        }
    }

    // ---- the array task's checks -------------------------------------------------------------

    /**
     * The checks of one subscription's updates (docs/runners.md, the array task): the first,
     * middle and last elements in the array's own type (every element with --check-all), and the
     * length against the first update's. Called from one callback thread at a time.
     */
    static final class ArrayCheck {
        private final boolean all;
        private int firstLength = -1;
        /** Of the last update checked. */
        double first;
        int length;

        ArrayCheck(boolean all) {
            this.all = all;
        }

        /** The bits of the checks that failed: 1 middle, 2 last, 4 length, 8 some element. */
        int check(Object a, boolean unsigned) {
            int bad;
            if (a instanceof double[] d) bad = doubles(d);
            else if (a instanceof float[] f) bad = floats(f);
            else if (a instanceof long[] l) bad = longs(l, unsigned);
            else if (a instanceof int[] n) bad = ints(n, unsigned);
            else if (a instanceof short[] s) bad = shorts(s, unsigned);
            else if (a instanceof byte[] b) bad = bytes(b, unsigned);
            else {
                length = 0;
                first = Double.NaN;
                bad = 8;
            }
            if (firstLength < 0) firstLength = length;
            if (length == 0 || length != firstLength) bad |= 4;
            return bad;
        }

        private int doubles(double[] a) {
            length = a.length;
            if (length == 0) return nan();
            double f = a[0];
            first = f;
            int bad = (a[length / 2] != f ? 1 : 0) | (a[length - 1] != f ? 2 : 0);
            if (all) for (double x : a) if (x != f) return bad | 8;
            return bad;
        }

        private int floats(float[] a) {
            length = a.length;
            if (length == 0) return nan();
            float f = a[0];
            first = f;
            int bad = (a[length / 2] != f ? 1 : 0) | (a[length - 1] != f ? 2 : 0);
            if (all) for (float x : a) if (x != f) return bad | 8;
            return bad;
        }

        private int longs(long[] a, boolean unsigned) {
            length = a.length;
            if (length == 0) return nan();
            long f = a[0];
            first = unsigned && f < 0 ? f + 0x1p64 : f;
            int bad = (a[length / 2] != f ? 1 : 0) | (a[length - 1] != f ? 2 : 0);
            if (all) for (long x : a) if (x != f) return bad | 8;
            return bad;
        }

        private int ints(int[] a, boolean unsigned) {
            length = a.length;
            if (length == 0) return nan();
            int f = a[0];
            first = unsigned ? f & 0xffffffffL : f;
            int bad = (a[length / 2] != f ? 1 : 0) | (a[length - 1] != f ? 2 : 0);
            if (all) for (int x : a) if (x != f) return bad | 8;
            return bad;
        }

        private int shorts(short[] a, boolean unsigned) {
            length = a.length;
            if (length == 0) return nan();
            short f = a[0];
            first = unsigned ? f & 0xffff : f;
            int bad = (a[length / 2] != f ? 1 : 0) | (a[length - 1] != f ? 2 : 0);
            if (all) for (short x : a) if (x != f) return bad | 8;
            return bad;
        }

        private int bytes(byte[] a, boolean unsigned) {
            length = a.length;
            if (length == 0) return nan();
            byte f = a[0];
            first = unsigned ? f & 0xff : f;
            int bad = (a[length / 2] != f ? 1 : 0) | (a[length - 1] != f ? 2 : 0);
            if (all) for (byte x : a) if (x != f) return bad | 8;
            return bad;
        }

        private int nan() {
            first = Double.NaN;
            return 0;
        }
    }

    /** The first element of an array as a number (NaN when empty): the latency task's match. */
    static double firstElement(Object a, boolean unsigned) {
        if (length(a) == 0) return Double.NaN;
        if (a instanceof double[] d) return d[0];
        if (a instanceof float[] f) return f[0];
        if (a instanceof long[] l) return l[0];
        if (a instanceof int[] n) return unsigned ? n[0] & 0xffffffffL : n[0];
        if (a instanceof short[] s) return unsigned ? s[0] & 0xffff : s[0];
        if (a instanceof byte[] b) return unsigned ? b[0] & 0xff : b[0];
        return Double.NaN;
    }

    static int length(Object a) {
        return a == null ? 0 : java.lang.reflect.Array.getLength(a);
    }

    // ---- the put tasks -----------------------------------------------------------------------

    /** A primitive array of n elements of a type of docs/runners.md (double, float, int64, int32, int16, int8, char). */
    static Object newArray(String type, int n) {
        return switch (type) {
            case "float" -> new float[n];
            case "int64" -> new long[n];
            case "int32" -> new int[n];
            case "int16" -> new short[n];
            case "int8", "char" -> new byte[n];
            default -> new double[n];
        };
    }

    /** Every element set to k, cast to the array's type (integers wrap). */
    static void fill(Object a, long k) {
        if (a instanceof double[] d) Arrays.fill(d, k);
        else if (a instanceof float[] f) Arrays.fill(f, k);
        else if (a instanceof long[] l) Arrays.fill(l, k);
        else if (a instanceof int[] n) Arrays.fill(n, (int) k);
        else if (a instanceof short[] s) Arrays.fill(s, (short) k);
        else if (a instanceof byte[] b) Arrays.fill(b, (byte) k);
        else throw new IllegalArgumentException("not a numeric array: " + a);
    }

    /** One put of the array-put task: every element equal to k; throws when the client reports a failure. */
    interface ArrayPut {
        void put(long k) throws Exception;
    }

    /** The array-put loop: N puts one after another, one sample each (docs/runners.md). */
    static void runArrayPut(Samples store, int elements, ArrayPut put) {
        emit("{\"ev\":\"connected\",\"count\":1}");
        for (long k = 1; k <= store.perPv; k++) {
            double t0 = wallNow();
            int status = 0;
            try {
                put.put(k);
            } catch (Exception e) {
                status = 1;
            }
            store.add(0, 0, status, k, t0, wallNow());
        }
        emit("{\"ev\":\"complete\",\"elements\":" + elements + "}");
        store.ship();
    }

    /** Rounds per latency size that are not kept: they warm up the code paths. */
    static final int LATENCY_ROUNDS_NOT_KEPT = 3;

    /** One put of the latency task: the array of the size filled with value; a future to await after its update, or null. */
    interface LatencyPut {
        CompletableFuture<?> put(int sizeIndex, int value) throws Exception;
    }

    /**
     * The latency task: the runner's monitor callback calls update(); run() puts per size and
     * waits for the update whose first element is the value put.
     */
    static final class Latency {
        private boolean first;
        private boolean waiting;
        private boolean arrived;
        private double want;
        private double received;
        private double stamp;
        private int severity;
        private int length;

        synchronized void update(double value0, int length, int severity, double stamp, double received) {
            first = true;
            if (waiting && value0 == want) {
                waiting = false;
                arrived = true;
                this.received = received;
                this.stamp = stamp;
                this.severity = severity;
                this.length = length;
            }
            notifyAll();
        }

        synchronized void awaitFirst(String name) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!first) {
                long left = end - System.nanoTime();
                if (left <= 0) fail(1, name + ": no first monitor update within 30 s");
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }

        void run(String name, int[] sizes, LatencyPut put, Samples store) throws Exception {
            emit("{\"ev\":\"connected\",\"count\":1}");
            long counter = 0;
            for (int i = 0; i < sizes.length; i++) {
                for (int round = -LATENCY_ROUNDS_NOT_KEPT; round < store.perPv; round++) {
                    int value = (int) (counter++ % 250 + 1);
                    synchronized (this) {
                        want = value;
                        waiting = true;
                        arrived = false;
                    }
                    double t0 = wallNow();
                    CompletableFuture<?> done = put.put(i, value);
                    synchronized (this) {
                        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                        while (!arrived) {
                            long left = end - System.nanoTime();
                            if (left <= 0) fail(1, name + ": no monitor update of the " + sizes[i] + "-element put within 60 s");
                            TimeUnit.NANOSECONDS.timedWait(this, left);
                        }
                        if (round >= 0) store.add(i, severity, length == sizes[i] ? 0 : 4, received - t0, stamp, received);
                    }
                    if (done != null) done.get(60, TimeUnit.SECONDS);
                }
            }
            emit("{\"ev\":\"complete\"}");
            store.ship();
        }
    }
}
