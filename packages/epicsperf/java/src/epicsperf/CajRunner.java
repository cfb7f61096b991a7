package epicsperf;

import static epicsperf.Protocol.emit;
import static epicsperf.Protocol.fail;
import static epicsperf.Protocol.json;
import static epicsperf.Protocol.wallNow;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import gov.aps.jca.CAException;
import gov.aps.jca.CAStatus;
import gov.aps.jca.Channel;
import gov.aps.jca.Context;
import gov.aps.jca.JCALibrary;
import gov.aps.jca.Monitor;
import gov.aps.jca.dbr.DBR;
import gov.aps.jca.dbr.DBRType;
import gov.aps.jca.dbr.STS;
import gov.aps.jca.dbr.TIME;
import gov.aps.jca.dbr.TimeStamp;
import gov.aps.jca.event.ConnectionEvent;
import gov.aps.jca.event.ConnectionListener;
import gov.aps.jca.event.MonitorListener;

/**
 * java-caj: JCA with CAJ, its pure Java Channel Access client
 * (JCALibrary.getInstance().createContext(JCALibrary.CHANNEL_ACCESS_JAVA), a CAJContext).
 *
 * The context takes EPICS_CA_* from the environment (the system property jca.use_env; without it
 * CAJ reads only JCA's properties, which Phoebus fills from its preferences), and is told not to start a CA
 * repeater (CA_DISABLE_REPEATER): CAJ would start one as a second, detached JVM that outlives the
 * run, outside the measured process; the runners need none. Callbacks run on CAJ's reactor
 * threads (its default DirectEventDispatcher), requests go out at context.flushIO().
 * <ul>
 * <li>snapshot: every channel created at once with a connection listener; on the first connection
 * its get (DBR_TIME_STRING for a string PV, else DBR_TIME_DOUBLE of the element count) with a
 * GetListener; each PV given up at its own timeout ("not found" when it never connected).</li>
 * <li>monitor: addMonitor(DBR_TIME_DOUBLE, 1, VALUE|ALARM) from the connection listener.</li>
 * <li>array: addMonitor of the native TIME type with count 0 (the server's current length); the
 * listener looks at three elements of the array CAJ decoded the update into. CAJ drops the
 * connection for an update larger than EPICS_CA_MAX_ARRAY_BYTES (with a log line only): the
 * task then fails with that reason.</li>
 * <li>array-put: put(array, PutListener) awaiting each completion (WRITE_NOTIFY), or put(array)
 * (WRITE) with --no-callback, in the channel's native type, flushed at once.</li>
 * <li>latency: put(array) without completion, then its own monitor update.</li>
 * </ul>
 */
public final class CajRunner {
    private CajRunner() {}

    static final String CLIENT = "java-caj";

    public static void main(String[] argv) throws Exception {
        Protocol.openEvents();
        Protocol.Args args = Protocol.parse(argv);
        String version = Protocol.libraryVersion(JCALibrary.class, "org.epics", "jca");
        System.setProperty("jca.use_env", "true");
        System.setProperty("CA_DISABLE_REPEATER", "true");
        Context context = null;
        try {
            context = JCALibrary.getInstance().createContext(JCALibrary.CHANNEL_ACCESS_JAVA);
        } catch (CAException e) {
            fail(1, "cannot create a CAJ context: " + e);
        }
        switch (args.task) {
            case "snapshot" -> snapshot(context, args, version);
            case "monitor" -> monitor(context, args, version);
            case "array" -> array(context, args, version);
            case "array-put" -> arrayPut(context, args, version);
            case "latency" -> latency(context, args, version);
            default -> fail(2, "unknown task " + args.task);
        }
        Protocol.expect("exit");
        context.destroy();
        System.exit(0);
    }

    /** The IOC timestamp of a TIME DBR as POSIX seconds. */
    static double stamp(DBR dbr) {
        TimeStamp t = ((TIME) dbr).getTimeStamp();
        return t == null ? 0 : t.secPastEpoch() + Protocol.EPICS_EPOCH + t.nsec() * 1e-9;
    }

    static int severity(DBR dbr) {
        return ((STS) dbr).getSeverity().getValue();
    }

    static int status(DBR dbr) {
        return ((STS) dbr).getStatus().getValue();
    }

    /** A request CAJ queued goes out now (a flush from a callback is handed to CAJ's threads). */
    static void flush(Context context) {
        try {
            context.flushIO();
        } catch (CAException e) {
            fail(1, "flush: " + e);
        }
    }

    // ---- snapshot ------------------------------------------------------------------------------

    static void snapshot(Context context, Protocol.Args args, String version) throws CAException {
        List<String> names = args.names;
        int n = names.size();
        String[] entries = new String[n];
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        long t0 = System.nanoTime();
        Channel[] channels = new Channel[n];
        boolean[] requested = new boolean[n];
        CompletableFuture<?>[] all = new CompletableFuture<?>[n];
        for (int i = 0; i < n; i++) {
            final int index = i;
            CompletableFuture<DBR> result = new CompletableFuture<>();
            all[i] = result.orTimeout(Protocol.leftNs(t0, args.timeoutMs), TimeUnit.NANOSECONDS).handle((dbr, error) -> {
                double elapsed = Protocol.elapsedMs(t0);
                if (error == null) entries[index] = entry(dbr, elapsed);
                else if (error instanceof TimeoutException) {
                    boolean asked;
                    synchronized (requested) {
                        asked = requested[index];
                    }
                    entries[index] = Protocol.failed(asked ? "timeout" : "not found", elapsed);
                } else entries[index] = Protocol.failed(error.getMessage() == null ? error.toString() : error.getMessage(), elapsed);
                return null;
            });
            ConnectionListener onConnection = event -> {
                Channel channel = (Channel) event.getSource();
                if (!event.isConnected()) {
                    result.completeExceptionally(new Exception("disconnected"));
                    return;
                }
                synchronized (requested) {
                    if (requested[index]) return;
                    requested[index] = true;
                }
                boolean text = channel.getFieldType().isSTRING();
                try {
                    channel.get(text ? DBRType.TIME_STRING : DBRType.TIME_DOUBLE, text ? 1 : channel.getElementCount(), get -> {
                        if (get.getStatus() == CAStatus.NORMAL && get.getDBR() != null) result.complete(get.getDBR());
                        else result.completeExceptionally(new Exception(get.getStatus().getMessage()));
                    });
                    flush(context);
                } catch (CAException | RuntimeException e) {
                    result.completeExceptionally(e);
                }
            };
            channels[i] = context.createChannel(names.get(i), onConnection);
        }
        flush(context);
        CompletableFuture.allOf(all).join();
        emit("{\"ev\":\"done\"}");
        for (Channel channel : channels) channel.destroy();
        flush(context);
        Protocol.shipResults(entries);
    }

    private static String entry(DBR dbr, double elapsed) {
        String value;
        Object v = dbr.getValue();
        if (v instanceof String[] s) value = json(s.length > 0 && s[0] != null ? s[0] : "");
        else if (v instanceof double[] d) {
            if (d.length == 1) value = json(d[0]);
            else {
                StringBuilder b = new StringBuilder("[");
                for (int i = 0; i < d.length; i++) b.append(i > 0 ? "," : "").append(json(d[i]));
                value = b.append(']').toString();
            }
        } else value = "null";
        return Protocol.ok(value, severity(dbr), status(dbr), stamp(dbr), elapsed);
    }

    // ---- monitor and array ---------------------------------------------------------------------

    /** Add the monitor from the channel's connection listener, on its first connection. */
    private static ConnectionListener monitorOnConnect(Context context, String name, DBRType type, int count,
                                                       MonitorListener listener, Runnable onDisconnect) {
        Monitor[] monitor = new Monitor[1];
        return event -> {
            Channel channel = (Channel) event.getSource();
            if (!event.isConnected()) {
                if (onDisconnect != null) onDisconnect.run();
                return;
            }
            synchronized (monitor) {
                if (monitor[0] != null) return; // CAJ restores it after a reconnect
                try {
                    DBRType t = type != null ? type : nativeTimeType(channel);
                    monitor[0] = channel.addMonitor(t, count, Monitor.VALUE | Monitor.ALARM, listener);
                } catch (CAException | RuntimeException e) {
                    fail(1, name + ": cannot subscribe: " + e);
                }
            }
            flush(context);
        };
    }

    static void monitor(Context context, Protocol.Args args, String version) throws CAException {
        List<String> names = args.names;
        Protocol.Samples store = new Protocol.Samples(names.size(), args.samples, true);
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        for (int i = 0; i < names.size(); i++) {
            final int index = i;
            MonitorListener onUpdate = event -> {
                double received = wallNow();
                DBR dbr = event.getDBR();
                if (event.getStatus() != CAStatus.NORMAL || dbr == null) return;
                store.add(index, severity(dbr), status(dbr), ((double[]) dbr.getValue())[0], stamp(dbr), received);
            };
            context.createChannel(names.get(i), monitorOnConnect(context, names.get(i), DBRType.TIME_DOUBLE, 1, onUpdate, null));
        }
        flush(context);
        store.ship();
    }

    /** The TIME type of the channel's native type (a string or enum as double, as libca's runner). */
    static DBRType nativeTimeType(Channel channel) {
        DBRType t = channel.getFieldType();
        if (t.isFLOAT()) return DBRType.TIME_FLOAT;
        if (t.isINT()) return DBRType.TIME_INT;
        if (t.isSHORT()) return DBRType.TIME_SHORT;
        if (t.isBYTE()) return DBRType.TIME_BYTE;
        return DBRType.TIME_DOUBLE;
    }

    static void array(Context context, Protocol.Args args, String version) throws CAException {
        String name = args.names.get(0);
        Protocol.Samples store = new Protocol.Samples(1, args.samples, true);
        Protocol.ArrayCheck check = new Protocol.ArrayCheck(args.checkAll);
        String limit = System.getenv("EPICS_CA_MAX_ARRAY_BYTES");
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        MonitorListener onUpdate = event -> {
            double received = wallNow();
            DBR dbr = event.getDBR();
            if (event.getStatus() != CAStatus.NORMAL || dbr == null)
                fail(1, name + ": " + event.getStatus().getMessage() + " (EPICS_CA_MAX_ARRAY_BYTES=" + (limit == null ? "unset" : limit) + ")");
            // DBR_CHAR is unsigned in CA; CAJ gives it as Java's signed byte.
            int bad = check.check(dbr.getValue(), dbr.isBYTE());
            store.elements = check.length;
            store.add(0, severity(dbr), bad, check.first, stamp(dbr), received);
        };
        // CAJ closes the circuit on an update larger than its EPICS_CA_MAX_ARRAY_BYTES, saying so
        // only in its log: a disconnect here is that (the built-in IOC does not go away).
        Runnable onDisconnect = () -> fail(1, name + ": disconnected; CAJ drops the connection for an update larger than EPICS_CA_MAX_ARRAY_BYTES="
            + (limit == null ? "unset (16384)" : limit) + ": raise the limit");
        context.createChannel(name, monitorOnConnect(context, name, null, 0, onUpdate, onDisconnect));
        flush(context);
        store.ship();
    }

    // ---- array-put and latency -----------------------------------------------------------------

    /** Connect one channel as JCA's examples do: create it, then pendIO. */
    private static Channel connect(Context context, String name) {
        try {
            Channel channel = context.createChannel(name);
            context.pendIO(10.0);
            return channel;
        } catch (gov.aps.jca.TimeoutException e) {
            fail(1, name + ": not found within 10 s");
        } catch (CAException | RuntimeException e) {
            fail(1, name + ": " + e);
        }
        return null;
    }

    /** An array of the channel's native type (CA has no int64: such a waveform is served as double). */
    static Object nativeArray(Channel channel, int n) {
        DBRType t = channel.getFieldType();
        if (t.isFLOAT()) return new float[n];
        if (t.isINT()) return new int[n];
        if (t.isSHORT()) return new short[n];
        if (t.isBYTE()) return new byte[n];
        return new double[n];
    }

    /** put(array) without completion, or with a PutListener when `listener` is given. */
    static void put(Channel channel, Object a, gov.aps.jca.event.PutListener listener) throws CAException {
        if (a instanceof double[] d) { if (listener == null) channel.put(d); else channel.put(d, listener); }
        else if (a instanceof float[] f) { if (listener == null) channel.put(f); else channel.put(f, listener); }
        else if (a instanceof int[] i) { if (listener == null) channel.put(i); else channel.put(i, listener); }
        else if (a instanceof short[] s) { if (listener == null) channel.put(s); else channel.put(s, listener); }
        else if (a instanceof byte[] b) { if (listener == null) channel.put(b); else channel.put(b, listener); }
        else throw new IllegalArgumentException("not a numeric array");
    }

    static void arrayPut(Context context, Protocol.Args args, String version) {
        String name = args.names.get(0);
        Protocol.Samples store = new Protocol.Samples(1, args.samples, false);
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        Channel channel = connect(context, name);
        Object buffer = nativeArray(channel, args.elements);
        boolean callback = !args.noCallback;
        // One buffer: CAJ encodes a put into its send buffer when it is made.
        Protocol.runArrayPut(store, args.elements, k -> {
            Protocol.fill(buffer, k);
            if (!callback) {
                put(channel, buffer, null);
                flush(context);
                return;
            }
            CompletableFuture<CAStatus> done = new CompletableFuture<>();
            put(channel, buffer, event -> done.complete(event.getStatus()));
            flush(context);
            CAStatus status = done.get(60, TimeUnit.SECONDS);
            if (status != CAStatus.NORMAL) throw new Exception(status.getMessage());
        });
    }

    static void latency(Context context, Protocol.Args args, String version) throws Exception {
        String name = args.names.get(0);
        int[] sizes = args.sizes;
        Protocol.Samples store = new Protocol.Samples(sizes.length, args.samples, false);
        Protocol.Latency latency = new Protocol.Latency();
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        Channel channel = connect(context, name);
        Object[] buffers = new Object[sizes.length];
        for (int i = 0; i < sizes.length; i++) buffers[i] = nativeArray(channel, sizes[i]);
        channel.addMonitor(nativeTimeType(channel), 0, Monitor.VALUE | Monitor.ALARM, event -> {
            double received = wallNow();
            DBR dbr = event.getDBR();
            if (event.getStatus() != CAStatus.NORMAL || dbr == null) return;
            Object a = dbr.getValue();
            latency.update(Protocol.firstElement(a, dbr.isBYTE()), Protocol.length(a), severity(dbr), stamp(dbr), received);
        });
        flush(context);
        latency.awaitFirst(name);
        latency.run(name, sizes, (i, value) -> {
            Protocol.fill(buffers[i], value);
            put(channel, buffers[i], null);
            flush(context);
            return null;
        }, store);
    }
}
