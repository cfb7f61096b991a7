package epicsperf;

import static epicsperf.Protocol.emit;
import static epicsperf.Protocol.fail;
import static epicsperf.Protocol.json;
import static epicsperf.Protocol.wallNow;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.epics.pva.client.ClientChannelState;
import org.epics.pva.client.MonitorListener;
import org.epics.pva.client.PVAChannel;
import org.epics.pva.client.PVAClient;
import org.epics.pva.data.PVABool;
import org.epics.pva.data.PVAByteArray;
import org.epics.pva.data.PVAData;
import org.epics.pva.data.PVADoubleArray;
import org.epics.pva.data.PVAFloatArray;
import org.epics.pva.data.PVAInt;
import org.epics.pva.data.PVAIntArray;
import org.epics.pva.data.PVALong;
import org.epics.pva.data.PVALongArray;
import org.epics.pva.data.PVANumber;
import org.epics.pva.data.PVAShortArray;
import org.epics.pva.data.PVAString;
import org.epics.pva.data.PVAStringArray;
import org.epics.pva.data.PVAStructure;

/**
 * java-corepva: Phoebus's PV Access client, core-pva (org.epics.pva.client), on the IOC's QSRV.
 *
 * One PVAClient from the EPICS_PVA_* environment (core-pva's PVASettings reads it). Every channel
 * asks for field(value,alarm,timeStamp), as the other PVA runners do.
 * <ul>
 * <li>snapshot: per name, client.getChannel(name), then channel.connect() composed with
 * channel.read(request), given its own timeout with orTimeout: all CompletableFutures at once,
 * answered on core-pva's TCP threads. A name whose channel never connected is "not found", one
 * connected but unanswered a "timeout".</li>
 * <li>monitor and array: as Phoebus's PVA_PV, the channel's state listener subscribes once the
 * channel is CONNECTED (channel.subscribe(request, listener)); the listener gets core-pva's
 * PVAStructure, updated in place from each update (its arrays are new Java arrays core-pva decodes
 * per update), and reads alarm, timeStamp and value from it. The alarm status is alarm.message
 * mapped to the CA status (QSRV sends the CA status there), else alarm.status.</li>
 * <li>array-put: channel.write(true, "field(value)", array), a put with completion (process,
 * block), as Phoebus's asyncWrite, waiting for its reply. PV Access has no put without a reply
 * (core-pva's write(false, ...) is a put that does not ask to block, still answered), so
 * --no-callback fails with that reason.</li>
 * <li>latency: a subscription for its own updates; each round's put is write(false, ...), its
 * reply awaited only after the update arrived.</li>
 * </ul>
 */
public final class CorePvaRunner {
    private CorePvaRunner() {}

    static final String CLIENT = "java-corepva";
    static final String REQUEST = "field(value,alarm,timeStamp)";
    /** The channels to close before the client: PVAClient.close() waits up to 2 s for that. */
    private static final List<PVAChannel> OPEN = new ArrayList<>();

    public static void main(String[] argv) throws Exception {
        Protocol.openEvents();
        Protocol.Args args = Protocol.parse(argv);
        String version = Protocol.libraryVersion(PVAClient.class, "org.phoebus", "core-pva");
        PVAClient client = null;
        try {
            client = new PVAClient();
        } catch (Exception e) {
            fail(1, "cannot create a PVAClient: " + e);
        }
        switch (args.task) {
            case "snapshot" -> snapshot(client, args, version);
            case "monitor" -> monitor(client, args, version);
            case "array" -> array(client, args, version);
            case "array-put" -> arrayPut(client, args, version);
            case "latency" -> latency(client, args, version);
            default -> fail(2, "unknown task " + args.task);
        }
        Protocol.expect("exit");
        for (PVAChannel channel : OPEN) channel.close();
        client.close();
        System.exit(0);
    }

    // ---- snapshot ------------------------------------------------------------------------------

    static void snapshot(PVAClient client, Protocol.Args args, String version) {
        List<String> names = args.names;
        String[] entries = new String[names.size()];
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        long t0 = System.nanoTime();
        List<PVAChannel> channels = new ArrayList<>(names.size());
        CompletableFuture<?>[] all = new CompletableFuture<?>[names.size()];
        for (int i = 0; i < names.size(); i++) {
            final int index = i;
            PVAChannel channel = client.getChannel(names.get(i));
            channels.add(channel);
            all[i] = channel.connect()
                .thenCompose(connected -> channel.read(REQUEST))
                .orTimeout(Protocol.leftNs(t0, args.timeoutMs), TimeUnit.NANOSECONDS)
                .handle((data, error) -> {
                    double elapsed = Protocol.elapsedMs(t0);
                    entries[index] = error == null ? entry(data, elapsed) : Protocol.failed(reason(error, channel), elapsed);
                    return null;
                });
        }
        CompletableFuture.allOf(all).join();
        emit("{\"ev\":\"done\"}");
        for (PVAChannel channel : channels) channel.close();
        Protocol.shipResults(entries);
    }

    private static String reason(Throwable error, PVAChannel channel) {
        Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (e instanceof TimeoutException) return channel.isConnected() ? "timeout" : "not found";
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }

    private static String entry(PVAStructure data, double elapsed) {
        try {
            Alarm alarm = Alarm.of(data);
            return Protocol.ok(valueJson(data.get("value")), alarm.severity, alarm.status, stamp(data), elapsed);
        } catch (RuntimeException e) {
            return Protocol.failed("cannot read the value: " + e, elapsed);
        }
    }

    /** The value field as JSON: a number (an enum's index), a string, or an array. */
    private static String valueJson(PVAData value) {
        if (value instanceof PVANumber n) return json(n.getNumber().doubleValue());
        if (value instanceof PVAString s) return json(s.get() == null ? "" : s.get());
        if (value instanceof PVABool b) return b.get() ? "1" : "0";
        if (value instanceof PVAStructure s && s.get("index") instanceof PVANumber index) return json(index.getNumber().doubleValue());
        if (value instanceof PVAStringArray a) {
            StringBuilder b = new StringBuilder("[");
            for (String s : a.get()) b.append(b.length() > 1 ? "," : "").append(json(s));
            return b.append(']').toString();
        }
        Object array = primitiveArray(value);
        if (array != null) {
            boolean unsigned = unsigned(value);
            StringBuilder b = new StringBuilder("[");
            int n = Protocol.length(array);
            for (int i = 0; i < n; i++) b.append(i > 0 ? "," : "").append(json(element(array, i, unsigned)));
            return b.append(']').toString();
        }
        return value == null ? "null" : json(value.format());
    }

    private static double element(Object a, int i, boolean unsigned) {
        if (a instanceof double[] d) return d[i];
        if (a instanceof float[] f) return f[i];
        if (a instanceof long[] l) return unsigned && l[i] < 0 ? l[i] + 0x1p64 : l[i];
        if (a instanceof int[] n) return unsigned ? n[i] & 0xffffffffL : n[i];
        if (a instanceof short[] s) return unsigned ? s[i] & 0xffff : s[i];
        if (a instanceof byte[] b) return unsigned ? b[i] & 0xff : b[i];
        return Double.NaN;
    }

    /** The Java array core-pva decoded a numeric array field into (no copy), or null. */
    private static Object primitiveArray(PVAData value) {
        if (value instanceof PVADoubleArray a) return a.get();
        if (value instanceof PVAFloatArray a) return a.get();
        if (value instanceof PVALongArray a) return a.get();
        if (value instanceof PVAIntArray a) return a.get();
        if (value instanceof PVAShortArray a) return a.get();
        if (value instanceof PVAByteArray a) return a.get();
        return null;
    }

    private static boolean unsigned(PVAData value) {
        if (value instanceof PVALongArray a) return a.isUnsigned();
        if (value instanceof PVAIntArray a) return a.isUnsigned();
        if (value instanceof PVAShortArray a) return a.isUnsigned();
        if (value instanceof PVAByteArray a) return a.isUnsigned();
        return false;
    }

    // ---- alarm and time ------------------------------------------------------------------------

    record Alarm(int severity, int status) {
        static Alarm of(PVAStructure data) {
            PVAStructure alarm = data.get("alarm");
            if (alarm == null) return new Alarm(0, 0);
            PVAInt severity = alarm.get("severity");
            PVAInt status = alarm.get("status");
            PVAString message = alarm.get("message");
            int fallback = status == null ? 0 : status.get();
            return new Alarm(severity == null ? 0 : severity.get(), Protocol.caStatus(message == null ? null : message.get(), fallback));
        }
    }

    /** timeStamp as POSIX seconds (0 without one). */
    private static double stamp(PVAStructure data) {
        PVAStructure time = data.get("timeStamp");
        if (time == null) return 0;
        PVALong seconds = time.get("secondsPastEpoch");
        PVAInt nanoseconds = time.get("nanoseconds");
        return seconds == null || nanoseconds == null ? 0 : seconds.get() + nanoseconds.get() * 1e-9;
    }

    // ---- monitor and array ---------------------------------------------------------------------

    /** Subscribe as Phoebus's PVA_PV does: from the channel's state listener, each time it connects. */
    private static void subscribeWhenConnected(PVAClient client, String name, MonitorListener listener) {
        OPEN.add(client.getChannel(name, (channel, state) -> {
            if (state != ClientChannelState.CONNECTED) return;
            try {
                channel.subscribe(REQUEST, listener);
            } catch (Exception e) {
                fail(1, name + ": cannot subscribe: " + e);
            }
        }));
    }

    static void monitor(PVAClient client, Protocol.Args args, String version) {
        List<String> names = args.names;
        Protocol.Samples store = new Protocol.Samples(names.size(), args.samples, true);
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        for (int i = 0; i < names.size(); i++) {
            final int index = i;
            subscribeWhenConnected(client, names.get(i), (channel, changes, overruns, data) -> {
                if (data == null) return; // the server ended the subscription
                double received = wallNow();
                Alarm alarm = Alarm.of(data);
                PVAData value = data.get("value");
                double v = value instanceof PVANumber n ? n.getNumber().doubleValue() : Double.NaN;
                store.add(index, alarm.severity, alarm.status, v, stamp(data), received);
            });
        }
        store.ship();
    }

    static void array(PVAClient client, Protocol.Args args, String version) {
        String name = args.names.get(0);
        Protocol.Samples store = new Protocol.Samples(1, args.samples, true);
        Protocol.ArrayCheck check = new Protocol.ArrayCheck(args.checkAll);
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        subscribeWhenConnected(client, name, (channel, changes, overruns, data) -> {
            if (data == null) fail(1, name + ": the server ended the subscription");
            double received = wallNow();
            PVAData value = data.get("value");
            Object array = primitiveArray(value);
            if (array == null) fail(1, name + ": not a numeric array: " + (value == null ? "no value field" : value.getType()));
            int bad = check.check(array, unsigned(value));
            store.elements = check.length;
            store.add(0, Alarm.of(data).severity, bad, check.first, stamp(data), received);
        });
        store.ship();
    }

    // ---- array-put and latency -----------------------------------------------------------------

    private static PVAChannel connect(PVAClient client, String name) {
        PVAChannel channel = client.getChannel(name);
        OPEN.add(channel);
        try {
            channel.connect().get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail(1, name + ": not found within 10 s");
        } catch (InterruptedException | ExecutionException e) {
            fail(1, name + ": " + e);
        }
        return channel;
    }

    static void arrayPut(PVAClient client, Protocol.Args args, String version) {
        String name = args.names.get(0);
        Protocol.Samples store = new Protocol.Samples(1, args.samples, false);
        Object buffer = Protocol.newArray(args.type, args.elements);
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        if (args.noCallback) fail(1, "PV Access has no put without a reply (core-pva)");
        PVAChannel channel = connect(client, name);
        // One buffer: core-pva encodes it before the reply that each put waits for.
        Protocol.runArrayPut(store, args.elements, k -> {
            Protocol.fill(buffer, k);
            channel.write(true, "field(value)", buffer).get(60, TimeUnit.SECONDS);
        });
    }

    static void latency(PVAClient client, Protocol.Args args, String version) throws Exception {
        String name = args.names.get(0);
        int[] sizes = args.sizes;
        Protocol.Samples store = new Protocol.Samples(sizes.length, args.samples, false);
        Object[] buffers = new Object[sizes.length];
        for (int i = 0; i < sizes.length; i++) buffers[i] = Protocol.newArray(args.type.equals("char") ? "char" : "double", sizes[i]);
        Protocol.Latency latency = new Protocol.Latency();
        Protocol.ready(CLIENT, version);
        Protocol.expect("start");
        PVAChannel channel = connect(client, name);
        channel.subscribe(REQUEST, (ch, changes, overruns, data) -> {
            if (data == null) return;
            double received = wallNow();
            PVAData value = data.get("value");
            Object array = primitiveArray(value);
            double first = array == null ? Double.NaN : Protocol.firstElement(array, unsigned(value));
            latency.update(first, Protocol.length(array), Alarm.of(data).severity, stamp(data), received);
        });
        latency.awaitFirst(name);
        latency.run(name, sizes, (i, value) -> {
            Protocol.fill(buffers[i], value);
            return channel.write(false, "field(value)", buffers[i]);
        }, store);
    }
}
