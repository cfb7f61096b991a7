package epicsperf;

import static epicsperf.Protocol.emit;
import static epicsperf.Protocol.fail;
import static epicsperf.Protocol.json;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.epics.pva.PVASettings;
import org.epics.pva.data.PVAByteArray;
import org.epics.pva.data.PVAData;
import org.epics.pva.data.PVADouble;
import org.epics.pva.data.PVADoubleArray;
import org.epics.pva.data.PVAInt;
import org.epics.pva.data.PVAIntArray;
import org.epics.pva.data.PVALong;
import org.epics.pva.data.PVAString;
import org.epics.pva.data.PVAStructure;
import org.epics.pva.data.nt.PVATimeStamp;
import org.epics.pva.server.PVAServer;
import org.epics.pva.server.ServerPV;
import org.epics.pva.server.WriteEventHandler;

/**
 * Server runner `corepva` (docs/runners.md, Server runners): Phoebus core-pva's PVAServer
 * (org.epics.pva.server, pure Java PV Access), publishing the crossing PVs and posting on command.
 *
 * <pre>
 * java ... epicsperf.CorePvaServer serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]
 *     [--counters N] [--counter-rate HZ]
 * </pre>
 *
 * One PVAServer from the environment as core-pva's PVASettings reads it (Java properties first,
 * then environment variables), with three settings made as properties before PVASettings loads
 * (none where the property is given): PVASettings takes the TCP port from EPICS_PVA_SERVER_PORT
 * only and the UDP port from EPICS_PVAS_BROADCAST_PORT only, so those are set from the server's
 * variables as pvxs reads them (EPICS_PVAS_SERVER_PORT, else EPICS_PVA_SERVER_PORT;
 * EPICS_PVAS_BROADCAST_PORT, else EPICS_PVA_BROADCAST_PORT); an EPICS_PVAS_INTF_ADDR_LIST without
 * a multicast group (the orchestrator's `127.0.0.1`) is given to core-pva as `0.0.0.0
 * 224.0.0.128,1@127.0.0.1`, see serverSettings(); and without EPICS_PVAS_TLS_KEYCHAIN it is set
 * empty, so that core-pva does not pick up a keychain of the user's ~/.config/pva and open a TLS
 * port too. core-pva binds its TCP listener to the wildcard address (it has no setting for that)
 * and falls back to another port when the one asked for is taken: the runner then fails, the
 * orchestrator having given that port.
 * <ul>
 * <li>Each PV is PVAServer.createPV(name, structure) of an NTScalar (value, alarm, timeStamp) or
 * NTScalarArray built from core-pva's PVAData classes; core-pva keeps a copy, and each
 * ServerPV.update(structure) copies what changed into it and into each subscription's copy, then
 * queues the subscription's MONITOR on the client connection's sender thread.
 * <li>post and ship run in order on a poster thread: it makes update k in the runner's own
 * structure for the PV, waits for its time (paced from the first post on System.nanoTime), reads
 * the wall clock (Instant.now(), microseconds), sets it as the timeStamp, calls update() and keeps
 * (k, time). The main thread reads the commands and answers `stats` and `ramp` at once.
 * <li>--latency N: P:LATENCY:DOUBLE (double[]) and P:LATENCY:CHAR (byte[]), one element 0 at
 * start, created with a WriteEventHandler: core-pva hands it a copy of the PV's value with the
 * fields put decoded into it (on the client connection's receiver thread); the handler refuses
 * more than N elements (an exception, which core-pva answers as a failed put), stamps the value
 * with the wall clock and update()s the PV with it; core-pva sends the put's reply once it returns.
 * <li>--counters N: P:CALC1..N and P:RAMP, doubles at 1 in MINOR alarm (alarm.severity 1,
 * alarm.status 1, alarm.message "HIGH"), the start time as first timestamp. With --counter-rate HZ
 * a ticker thread ticks at t0 + j/HZ on System.nanoTime from j = 0, the first as it starts just
 * before `ready` (late: at once; more than 1 s behind: the schedule starts again from now): it
 * sets the common value and the wall clock in one structure, update()s every counter with it in
 * order, then counts the tick. P:RAMP has a thread of its own,
 * still until `ramp HZ`; it posts holding a fair lock, which `ramp` takes to change the schedule,
 * so that once `ramped` is written no post of the rate before is under way.
 * </ul>
 * `ready` is written once a PV Access search of the runner's own (UDP, to the server's interface
 * address and broadcast port, as a client's) has been answered for every crossing and round-trip
 * PV, the first and last counters and P:RAMP. `exit` (or the end of stdin) lets the poster finish
 * the commands before it, stops the ticker and the ramp, closes the server and exits 0.
 */
public final class CorePvaServer {
    static final String SERVER = "corepva";
    static final int MAX_COUNT = 127; // so that k fits an int8
    static final double RAMP_MAX_HZ = 5000;
    static final String NT_SCALAR = "epics:nt/NTScalar:1.0";
    static final String NT_SCALAR_ARRAY = "epics:nt/NTScalarArray:1.0";
    /** How long the runner's own searches may go unanswered. */
    static final long READY_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);
    /** core-pva's logger, held so that its level stays set. */
    private static final Logger PVA_LOG = Logger.getLogger("org.epics.pva");

    // ---- arguments ---------------------------------------------------------------------------

    static final class Options {
        String prefix;
        int[] int32 = new int[0];
        int[] bytes = new int[0];
        int latency; // 0: none
        int counters;
        double counterRate;
    }

    static Options parse(String[] argv) {
        if (argv.length < 1 || !argv[0].equals("serve"))
            fail(2, "usage: CorePvaServer serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]"
                + " [--counters N] [--counter-rate HZ]");
        Options o = new Options();
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            if (i + 1 >= argv.length) fail(2, a + " takes a value");
            String v = argv[++i];
            switch (a) {
                case "--prefix" -> o.prefix = v;
                case "--int32" -> o.int32 = sizes(a, v);
                case "--bytes" -> o.bytes = sizes(a, v);
                case "--latency" -> o.latency = whole(a, v, 1, 100_000_000);
                case "--counters" -> o.counters = whole(a, v, 0, 10_000_000);
                case "--counter-rate" -> {
                    double hz = -1;
                    try {
                        hz = Double.parseDouble(v);
                    } catch (NumberFormatException e) {
                        // below
                    }
                    if (!(hz >= 0 && hz <= 1e6)) fail(2, "--counter-rate takes a number of Hz from 0, got " + v);
                    o.counterRate = hz;
                }
                default -> fail(2, "unknown argument " + a);
            }
        }
        if (o.prefix == null) fail(2, "--prefix P is required");
        return o;
    }

    private static int whole(String option, String v, int lo, int hi) {
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= lo && n <= hi) return n;
        } catch (NumberFormatException e) {
            // below
        }
        fail(2, option + " takes a whole number from " + lo + " to " + hi + ", got " + v);
        return 0;
    }

    /** A comma-separated list of sizes from 1 (empty: none), each once. */
    private static int[] sizes(String option, String v) {
        Set<Integer> out = new LinkedHashSet<>();
        for (String s : v.split(",")) {
            if (s.isBlank()) continue;
            out.add(whole(option, s, 1, 100_000_000));
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    // ---- core-pva's settings -----------------------------------------------------------------

    /** Set core-pva's setting `property` from the first of `variables` set, unless given as a property. */
    private static void setting(String property, String... variables) {
        if (System.getProperty(property) != null) return;
        for (String variable : variables) {
            String value = System.getenv(variable);
            if (value != null && !value.isBlank()) {
                System.setProperty(property, value.strip());
                return;
            }
        }
    }

    /** The local multicast group of PV Access (core-pva's EPICS_PVA_MULTICAST_GROUP, pvxs's too). */
    static final String LOCAL_GROUP = "224.0.0.128";

    /**
     * Before PVASettings loads: the server's ports as a PV Access server reads them, its interface
     * list with the local multicast group, plain TCP.
     */
    static void serverSettings() {
        setting("EPICS_PVA_SERVER_PORT", "EPICS_PVAS_SERVER_PORT", "EPICS_PVA_SERVER_PORT");
        setting("EPICS_PVAS_BROADCAST_PORT", "EPICS_PVAS_BROADCAST_PORT", "EPICS_PVA_BROADCAST_PORT");
        // A search sent to an address of this host reaches whichever process bound the broadcast
        // port there last: a client of the host (pvxs's, this project's) binds it too and re-sends
        // such a datagram to the local group 224.0.0.128 on loopback, where the host's servers
        // listen. core-pva has one IPv4 UDP socket, bound to the list's IPv4 address and joined to
        // the list's groups, and a socket bound to 127.0.0.1 does not receive the group's
        // datagrams: its default list is `0.0.0.0 [::] 224.0.0.128,1@127.0.0.1 ...` for that. So a
        // list without a group (the orchestrator's `127.0.0.1`) is given to core-pva as 0.0.0.0
        // and the local group on loopback, else the searches of a client started after the server
        // would go unanswered.
        String list = System.getProperty("EPICS_PVAS_INTF_ADDR_LIST");
        if (list == null) {
            list = System.getenv("EPICS_PVAS_INTF_ADDR_LIST");
            if (list != null && !list.isBlank() && !list.contains("@")) {
                StringBuilder b = new StringBuilder();
                boolean ipv4 = false;
                for (String a : list.strip().split("\\s+")) {
                    if (!ipv4 && a.matches("\\d+\\.\\d+\\.\\d+\\.\\d+")) {
                        a = "0.0.0.0";
                        ipv4 = true;
                    }
                    b.append(b.length() > 0 ? " " : "").append(a);
                }
                if (ipv4) System.setProperty("EPICS_PVAS_INTF_ADDR_LIST", b + " " + LOCAL_GROUP + ",1@127.0.0.1");
            }
        }
        if (System.getProperty("EPICS_PVAS_TLS_KEYCHAIN") == null && System.getenv("EPICS_PVAS_TLS_KEYCHAIN") == null)
            System.setProperty("EPICS_PVAS_TLS_KEYCHAIN", "");
    }

    // ---- values ------------------------------------------------------------------------------

    static PVAStructure alarm(int severity, int status, String message) {
        return new PVAStructure("alarm", "alarm_t", new PVAInt("severity", severity), new PVAInt("status", status),
            new PVAString("message", message));
    }

    /** An NTScalar (or NTScalarArray) of `value` with `alarm`, stamped `t`. */
    static PVAStructure nt(String type, PVAData value, PVAStructure alarm, Instant t) {
        return new PVAStructure("", type, value, alarm, new PVATimeStamp(t));
    }

    static double seconds(Instant t) {
        return t.getEpochSecond() + t.getNano() * 1e-9;
    }

    /** A structure of the runner's own for one PV: its value field and its timeStamp's fields. */
    static final class Stamped {
        final PVAStructure structure;
        private final PVALong secs;
        private final PVAInt nanos;

        Stamped(PVAStructure structure) {
            this.structure = structure;
            PVAStructure ts = structure.get("timeStamp");
            secs = ts.get("secondsPastEpoch");
            nanos = ts.get("nanoseconds");
        }

        void stamp(Instant t) {
            secs.set(t.getEpochSecond());
            nanos.set(t.getNano());
        }

        <T extends PVAData> T value() {
            return structure.get("value");
        }

        /** The counters' and RAMP's next value: v, stamped now; the stamp. */
        Instant next(double v) {
            Instant t = Instant.now();
            this.<PVADouble>value().set(v);
            stamp(t);
            return t;
        }
    }

    /** A PV that `post` updates: update k is the value k, every element k for an array. */
    static final class Target {
        final ServerPV pv;
        final Stamped own;
        final int elements; // 0: the double
        final PVAData value;

        Target(ServerPV pv, PVAStructure structure, int elements) {
            this.pv = pv;
            this.own = new Stamped(structure);
            this.elements = elements;
            this.value = own.value();
        }

        /** Set update k in the runner's structure (a new array for an array PV). */
        void make(int k) {
            if (value instanceof PVADouble d) d.set(k);
            else if (value instanceof PVADoubleArray a) {
                double[] v = new double[elements];
                Arrays.fill(v, k);
                a.set(v);
            }
            else if (value instanceof PVAIntArray a) {
                int[] v = new int[elements];
                Arrays.fill(v, k);
                a.set(v);
            } else if (value instanceof PVAByteArray a) {
                byte[] v = new byte[elements];
                Arrays.fill(v, (byte) k);
                a.set(v);
            }
        }
    }

    // ---- the runner --------------------------------------------------------------------------

    private final Options options;
    private final PVAServer server;
    private final Map<String, Target> targets = new LinkedHashMap<>();
    private final List<String> latencyNames = new ArrayList<>();
    private ServerPV[] counters = new ServerPV[0];
    private Stamped tickValue;
    private ServerPV rampPv;
    private Stamped rampOwn;

    /** The last completed tick, for `stats`. */
    private record Tick(long ticks, double time, double value) {}

    private volatile Tick lastTick = new Tick(0, 0, 1);
    private volatile boolean stopping;
    private Thread ticker;

    // P:RAMP's schedule, under rampLock (fair: a `ramp` command gets it after the post under way).
    private final ReentrantLock rampLock = new ReentrantLock(true);
    private final Condition rampWake = rampLock.newCondition();
    private double rampHz;
    private long rampT0;
    private long rampGeneration;
    private boolean rampStop;
    private volatile double rampValue = 1;
    private Thread ramper;

    /** (k, wall clock s) pairs since the last ship: the poster thread's. */
    private double[] posts = new double[256];
    private int postCount;
    private final ExecutorService poster = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "poster");
        t.setDaemon(true);
        return t;
    });

    private CorePvaServer(Options options, PVAServer server) {
        this.options = options;
        this.server = server;
    }

    public static void main(String[] argv) {
        Protocol.openEvents();
        Options options = parse(argv);
        serverSettings();
        PVA_LOG.setLevel(Level.WARNING);
        String version = Protocol.libraryVersion(PVAServer.class, "org.phoebus", "core-pva");
        PVAServer server = null;
        try {
            server = new PVAServer();
        } catch (Throwable e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            fail(1, "core-pva cannot serve: " + e + (cause != e ? " (" + cause + ")" : ""));
        }
        int asked = PVASettings.EPICS_PVA_SERVER_PORT;
        int port = server.getTCPAddress(false).getPort();
        if (asked != 0 && port != asked) {
            server.close();
            fail(1, "the PVA server port " + asked + " is in use (core-pva fell back to " + port + ")");
        }
        CorePvaServer runner = new CorePvaServer(options, server);
        try {
            runner.publish();
        } catch (Exception e) {
            fail(1, "core-pva cannot create the PVs: " + e);
        }
        runner.awaitSearches();
        runner.startThreads();
        emit("{\"ev\":\"ready\",\"server\":" + json(SERVER) + ",\"version\":" + json(version) + "}");
        runner.serve();
    }

    /** Create every PV of the options. */
    private void publish() throws Exception {
        String p = options.prefix;
        Instant start = Instant.now();
        PVAStructure none = alarm(0, 0, "");
        add(p + "CROSS:DOUBLE", nt(NT_SCALAR, new PVADouble("value", 0), none, start), 0);
        for (int n : options.int32)
            add(p + "CROSS:INT32:" + n, nt(NT_SCALAR_ARRAY, new PVAIntArray("value", false, new int[n]), none, start), n);
        for (int m : options.bytes)
            add(p + "CROSS:BYTES:" + m, nt(NT_SCALAR_ARRAY, new PVAByteArray("value", false, new byte[m]), none, start), m);
        if (options.latency > 0) {
            latency(p + "LATENCY:DOUBLE", nt(NT_SCALAR_ARRAY, new PVADoubleArray("value", new double[1]), none, start));
            latency(p + "LATENCY:CHAR", nt(NT_SCALAR_ARRAY, new PVAByteArray("value", false, new byte[1]), none, start));
        }
        if (options.counters > 0) {
            // MINOR at every value, as QSRV sends a HIGH alarm.
            PVAStructure counter = nt(NT_SCALAR, new PVADouble("value", 1), alarm(1, 1, "HIGH"), start);
            counters = new ServerPV[options.counters];
            for (int i = 0; i < counters.length; i++) counters[i] = server.createPV(p + "CALC" + (i + 1), counter);
            tickValue = new Stamped(counter.cloneData());
            rampOwn = new Stamped(counter.cloneData());
            rampPv = server.createPV(p + "RAMP", rampOwn.structure);
        }
    }

    private void add(String name, PVAStructure structure, int elements) {
        ServerPV pv = server.createPV(name, structure);
        targets.put(name, new Target(pv, structure, elements));
    }

    /** A round-trip PV: its puts go through this handler, which posts what was put, then core-pva replies. */
    private void latency(String name, PVAStructure initial) {
        final int most = options.latency;
        WriteEventHandler handler = (tcp, pv, changes, written) -> {
            PVAData value = written.get("value");
            int n = value instanceof PVADoubleArray d ? d.get().length
                : value instanceof PVAByteArray b ? b.get().length : 0;
            if (n > most) throw new Exception("at most " + most + " elements");
            PVATimeStamp.set(written, Instant.now());
            pv.update(written);
        };
        server.createPV(name, initial, handler);
        latencyNames.add(name);
    }

    // ---- ready: a search of the runner's own --------------------------------------------------

    /** The address a client reaches the server's UDP socket at: the first of EPICS_PVAS_INTF_ADDR_LIST, loopback for any. */
    private static InetAddress searchHost() {
        String list = PVASettings.EPICS_PVAS_INTF_ADDR_LIST.strip();
        String first = list.isEmpty() ? "0.0.0.0" : list.split("\\s+")[0];
        String host = first;
        if (first.startsWith("[")) host = first.substring(1, first.indexOf(']') > 0 ? first.indexOf(']') : first.length());
        else if (first.indexOf(':') == first.lastIndexOf(':') && first.indexOf(':') > 0) host = first.substring(0, first.indexOf(':'));
        try {
            InetAddress a = InetAddress.getByName(host);
            if (a.isAnyLocalAddress()) return InetAddress.getByName(a.getAddress().length == 4 ? "127.0.0.1" : "::1");
            return a;
        } catch (IOException e) {
            fail(1, "EPICS_PVAS_INTF_ADDR_LIST: cannot read its first address " + first + ": " + e.getMessage());
            return null;
        }
    }

    private static void putString(ByteBuffer b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 254) b.put((byte) bytes.length);
        else b.put((byte) 254).putInt(bytes.length);
        b.put(bytes);
    }

    /** A PV Access search request (unicast, little-endian) for `ids`, answered to replyPort of the sender. */
    private static byte[] searchMessage(int seq, Map<Integer, String> ids, int replyPort) {
        ByteBuffer b = ByteBuffer.allocate(65000).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) 0xCA).put((byte) 2).put((byte) 0).put((byte) 3).putInt(0);
        b.putInt(seq).put((byte) 0x80).put(new byte[3]).put(new byte[16]).putShort((short) replyPort);
        b.put((byte) 1);
        putString(b, "tcp");
        b.putShort((short) ids.size());
        for (Map.Entry<Integer, String> e : ids.entrySet()) {
            b.putInt(e.getKey());
            putString(b, e.getValue());
        }
        b.putInt(4, b.position() - 8);
        return Arrays.copyOf(b.array(), b.position());
    }

    /** The search ids a search response answers (none when it says not found). */
    private static int[] found(byte[] data, int length) {
        if (length < 8 || (data[0] & 0xff) != 0xCA || data[3] != 4) return new int[0];
        ByteBuffer b = ByteBuffer.wrap(data, 0, length).order((data[2] & 0x80) != 0 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        int offset = 8 + 12 + 4 + 16 + 2;
        offset += 1 + (data[offset] & 0xff); // the protocol, "tcp"
        if (data[offset] == 0) return new int[0];
        int count = b.getShort(offset + 1) & 0xffff;
        int[] ids = new int[count];
        for (int i = 0; i < count; i++) ids[i] = b.getInt(offset + 3 + 4 * i);
        return ids;
    }

    /**
     * Search for the served PVs as a client would (the crossing and round-trip PVs, of the counters
     * the first and the last, and P:RAMP), on the server's interface address and broadcast port,
     * until each is answered: a server that does not answer there fails the run.
     */
    private void awaitSearches() {
        List<String> names = new ArrayList<>(targets.keySet());
        names.addAll(latencyNames);
        if (counters.length > 0) {
            names.add(counters[0].getName());
            if (counters.length > 1) names.add(counters[counters.length - 1].getName());
            names.add(rampPv.getName());
        }
        Map<Integer, String> pending = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) pending.put(i + 1, names.get(i));
        InetAddress host = searchHost();
        int port = PVASettings.EPICS_PVAS_BROADCAST_PORT;
        long deadline = System.nanoTime() + READY_TIMEOUT_NS;
        byte[] reply = new byte[65536];
        try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(host, 0))) {
            int seq = 0;
            while (!pending.isEmpty()) {
                if (System.nanoTime() > deadline)
                    fail(1, "core-pva did not answer a search for " + pending.values().iterator().next() + " on "
                        + host.getHostAddress() + ":" + port + " within " + READY_TIMEOUT_NS / 1_000_000_000L + " s");
                // As many names a datagram as fit in an unfragmented one.
                Map<Integer, String> batch = new LinkedHashMap<>();
                int size = 0;
                for (Map.Entry<Integer, String> e : pending.entrySet()) {
                    int more = 4 + 5 + e.getValue().getBytes(StandardCharsets.UTF_8).length;
                    if (!batch.isEmpty() && size + more > 1300) {
                        send(socket, searchMessage(++seq, batch, socket.getLocalPort()), host, port);
                        batch.clear();
                        size = 0;
                    }
                    batch.put(e.getKey(), e.getValue());
                    size += more;
                }
                if (!batch.isEmpty()) send(socket, searchMessage(++seq, batch, socket.getLocalPort()), host, port);
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                while (!pending.isEmpty()) {
                    long left = until - System.nanoTime();
                    if (left <= 0) break;
                    socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
                    DatagramPacket packet = new DatagramPacket(reply, reply.length);
                    try {
                        socket.receive(packet);
                    } catch (SocketTimeoutException e) {
                        continue;
                    } catch (IOException e) {
                        continue; // an ICMP refusal: not listening yet
                    }
                    try {
                        for (int id : found(reply, packet.getLength())) pending.remove(id);
                    } catch (RuntimeException e) {
                        // not a reply of this protocol
                    }
                }
            }
        } catch (IOException e) {
            fail(1, "cannot search for the served PVs on " + host.getHostAddress() + ": " + e.getMessage());
        }
    }

    private static void send(DatagramSocket socket, byte[] message, InetAddress host, int port) {
        try {
            socket.send(new DatagramPacket(message, message.length, host, port));
        } catch (IOException e) {
            // not listening yet: tried again
        }
    }

    // ---- the ticker and the ramp -------------------------------------------------------------

    /** Sleep until `due` on System.nanoTime; false when the runner stops first. */
    private boolean sleepUntil(long due) {
        for (;;) {
            if (stopping) return false;
            long left = due - System.nanoTime();
            if (left <= 0) return true;
            LockSupport.parkNanos(this, left);
        }
    }

    private void startThreads() {
        if (counters.length > 0 && options.counterRate > 0) {
            ticker = new Thread(() -> tick(options.counterRate), "ticker");
            ticker.setDaemon(true);
            ticker.start();
        }
        if (rampPv != null) {
            ramper = new Thread(this::ramp, "ramp");
            ramper.setDaemon(true);
            ramper.start();
        }
    }

    /**
     * Tick j at t0 + j/hz from j = 0, the first as the ticker starts (just before `ready`, so that
     * the headroom workload's first stats answer follows a tick, as it does for the built-in IOC,
     * whose first tick it awaits): the common value + 1, the wall clock once, every counter in
     * order, then the count.
     */
    private void tick(double hz) {
        double v = 1;
        long ticks = 0;
        long t0 = System.nanoTime();
        for (long j = 0;; j++) {
            long due = t0 + Math.round(j * 1e9 / hz);
            if (!sleepUntil(due)) return;
            long now = System.nanoTime();
            if (now - due > 1_000_000_000L) { // fell far behind: the schedule again from now
                t0 = now;
                j = 0;
            }
            v += 1;
            Instant t = tickValue.next(v);
            for (ServerPV counter : counters) {
                if (stopping) return;
                try {
                    counter.update(tickValue.structure);
                } catch (Exception e) {
                    if (!stopping) fail(1, "the counters' tick " + (ticks + 1) + " failed at " + counter.getName() + ": " + e);
                    return;
                }
            }
            lastTick = new Tick(++ticks, seconds(t), v);
        }
    }

    /** P:RAMP: post j at the last `ramp` command + j/HZ (late: at once; more than 1 s behind: again from now). */
    private void ramp() {
        double v = 1;
        long seen = 0;
        double hz = 0;
        long t0 = 0;
        long j = 0;
        for (;;) {
            rampLock.lock();
            try {
                if (rampStop) return;
                if (rampGeneration != seen) {
                    seen = rampGeneration;
                    hz = rampHz;
                    t0 = rampT0;
                    j = 0;
                }
                if (!(hz > 0)) {
                    rampWake.await();
                    continue;
                }
                long due = t0 + Math.round((j + 1) * 1e9 / hz);
                long now = System.nanoTime();
                if (now < due) {
                    rampWake.awaitNanos(due - now);
                    continue;
                }
                j++;
                if (now - due > 1_000_000_000L) {
                    t0 = now;
                    j = 0;
                }
                v += 1;
                rampOwn.next(v);
                rampPv.update(rampOwn.structure);
                rampValue = v;
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (!stopping) fail(1, "RAMP's post of " + v + " failed: " + e);
                return;
            } finally {
                rampLock.unlock();
            }
        }
    }

    /** `ramp HZ`: in effect once it returns, whatever the ramp thread was doing. */
    private void setRamp(double hz) {
        rampLock.lock();
        try {
            rampHz = hz;
            rampT0 = System.nanoTime();
            rampGeneration++;
            rampWake.signalAll();
        } finally {
            rampLock.unlock();
        }
    }

    // ---- commands ----------------------------------------------------------------------------

    private void stats() {
        Tick t = lastTick;
        emit("{\"ev\":\"stats\",\"ticks\":" + t.ticks() + ",\"tickTime\":" + json(t.time()) + ",\"counterValue\":" + json(t.value())
            + (rampPv != null ? ",\"rampValue\":" + json(rampValue) : "") + ",\"time\":" + json(Protocol.wallNow()) + "}");
    }

    /** Update k = 1..count of `target`, at the first's time + (k-1) * period, each stamped and kept with the wall clock just before. */
    private void post(String name, Target target, int count, double periodMs) {
        long start = System.nanoTime();
        for (int k = 1; k <= count; k++) {
            target.make(k);
            long due = start + Math.round((k - 1) * periodMs * 1e6);
            for (long left; (left = due - System.nanoTime()) > 0;) LockSupport.parkNanos(left);
            Instant t = Instant.now();
            target.own.stamp(t);
            try {
                target.pv.update(target.own.structure);
            } catch (Exception e) {
                fail(1, "post " + k + " to " + name + " failed: " + e);
            }
            if (postCount + 2 > posts.length) posts = Arrays.copyOf(posts, posts.length * 2);
            posts[postCount++] = k;
            posts[postCount++] = seconds(t);
        }
        emit("{\"ev\":\"posted\",\"name\":" + json(name) + ",\"count\":" + count + "}");
    }

    private void ship() {
        ByteBuffer out = ByteBuffer.allocate(postCount * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < postCount; i++) out.putDouble(posts[i]);
        emit("{\"ev\":\"posts\",\"count\":" + postCount / 2 + ",\"bytes\":" + out.capacity() + "}", out.array());
        postCount = 0;
    }

    /** Commands until `exit` or the end of stdin; then the commands before it finish and the server stops. */
    private void serve() {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (;;) {
            String line;
            try {
                line = in.readLine();
            } catch (IOException e) {
                line = null;
            }
            if (line == null) break;
            String[] w = line.strip().split("\\s+");
            if (w[0].isEmpty()) continue;
            if (w[0].equals("exit") && w.length == 1) break;
            if (w[0].equals("stats") && w.length == 1) stats();
            else if (w[0].equals("ship") && w.length == 1) poster.execute(this::ship);
            else if (w[0].equals("ramp")) {
                if (rampPv == null) fail(2, "ramp: there is no RAMP PV without --counters");
                double hz = -1;
                try {
                    if (w.length == 2) hz = Double.parseDouble(w[1]);
                } catch (NumberFormatException e) {
                    // below
                }
                if (!(hz >= 0 && hz <= RAMP_MAX_HZ)) fail(2, "bad ramp command: " + line.strip() + " (ramp HZ, 0 to 5000)");
                setRamp(hz);
                emit("{\"ev\":\"ramped\",\"hz\":" + json(hz) + "}");
            } else if (w[0].equals("post") && w.length == 4) {
                String name = w[1];
                Target target = targets.get(name);
                if (target == null) fail(2, "post: no PV named " + name);
                int count = -1;
                double period = -1;
                try {
                    count = Integer.parseInt(w[2]);
                    period = Double.parseDouble(w[3]);
                } catch (NumberFormatException e) {
                    // below
                }
                if (count < 0 || count > MAX_COUNT || !(period >= 0 && period <= 3.6e6))
                    fail(2, "bad post command: " + line.strip() + " (post NAME COUNT PERIOD_MS, COUNT 0 to " + MAX_COUNT + ")");
                final int c = count;
                final double ms = period;
                poster.execute(() -> post(name, target, c, ms));
            } else fail(2, "unknown command '" + line.strip() + "'");
        }
        finish();
    }

    private void finish() {
        poster.shutdown();
        try {
            poster.awaitTermination(1, TimeUnit.DAYS);
        } catch (InterruptedException e) {
            // stop anyway
        }
        stopping = true;
        if (ticker != null) LockSupport.unpark(ticker);
        if (ramper != null) {
            rampLock.lock();
            try {
                rampStop = true;
                rampWake.signalAll();
            } finally {
                rampLock.unlock();
            }
        }
        // core-pva's close() waits up to 5 s per connection for its threads: exit in 2 s whatever it does.
        Thread watchdog = new Thread(() -> {
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2));
            Runtime.getRuntime().halt(0);
        }, "exit");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            if (ticker != null) ticker.join(1000);
            if (ramper != null) ramper.join(1000);
        } catch (InterruptedException e) {
            // stop anyway
        }
        server.close();
        Runtime.getRuntime().halt(0);
    }
}
