package epicsperf;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.epics.pva.client.ClientChannelState;
import org.epics.pva.client.PVAChannel;
import org.epics.pva.client.PVAClient;
import org.epics.pva.data.PVADouble;
import org.epics.pva.data.PVALongArray;

/**
 * Phoebus core-pva's client on TlsServer's PVs, for benchmarks/tls-cost.mjs: over TLS when
 * EPICS_PVA_TLS_KEYCHAIN names a keychain (core-pva reads it), plain TCP otherwise. Subscribes
 * as Phoebus's PVA_PV does (from the channel's state listener, field(value,alarm,timeStamp)).
 *
 *   TlsClient monitor PREFIX COUNTERS WARM_S SECONDS   PREFIX:C1..COUNTERS; a gap is an update
 *                                                      whose value is not the last one + 1
 *   TlsClient array PREFIX WARM_S SECONDS             PREFIX:ARRAY; a gap is an update whose first,
 *                                                      middle or last element differs from the others
 *
 * Prints "ready" once every subscription has its first update, "mark UPDATES" after WARM_S, and
 * "end UPDATES GAPS ELEMENTS" after SECONDS more (the counts since the start), then exits. Its CPU
 * is read from outside.
 */
public final class TlsClient {
    private static final String REQUEST = "field(value,alarm,timeStamp)";
    private static final AtomicLong updates = new AtomicLong();
    private static final AtomicLong gaps = new AtomicLong();
    private static final AtomicLong elements = new AtomicLong();

    public static void main(String[] args) throws Exception {
        final boolean array = args[0].equals("array");
        final String prefix = args[1];
        final int n = array ? 1 : Integer.parseInt(args[2]);
        final double warm = Double.parseDouble(args[array ? 2 : 3]);
        final double seconds = Double.parseDouble(args[array ? 3 : 4]);
        final PVAClient client = new PVAClient();
        final List<PVAChannel> channels = new ArrayList<>();
        final double[] last = new double[n];
        final boolean[] first = new boolean[n];
        final AtomicLong started = new AtomicLong();
        for (int i = 0; i < n; i++) {
            final int k = i;
            final String name = array ? prefix + "ARRAY" : prefix + "C" + (i + 1);
            channels.add(client.getChannel(name, (channel, state) -> {
                if (state != ClientChannelState.CONNECTED) return;
                try {
                    channel.subscribe(REQUEST, (ch, changes, overruns, data) -> {
                        if (array) {
                            final long[] a = ((PVALongArray) data.get("value")).get();
                            if (a.length == 0 || a[0] != a[a.length / 2] || a[0] != a[a.length - 1]) gaps.incrementAndGet();
                            elements.addAndGet(a.length);
                        } else {
                            final double v = ((PVADouble) data.get("value")).get();
                            if (first[k] && v != last[k] + 1) gaps.incrementAndGet();
                            last[k] = v;
                        }
                        if (!first[k]) {
                            first[k] = true;
                            started.incrementAndGet();
                        }
                        updates.incrementAndGet();
                    });
                } catch (Exception ex) {
                    System.err.println(name + ": " + ex);
                }
            }));
        }
        while (started.get() < n) TimeUnit.MILLISECONDS.sleep(10);
        System.out.println("ready");
        TimeUnit.MILLISECONDS.sleep(Math.round(warm * 1000));
        System.out.println("mark " + updates.get() + " " + elements.get());
        TimeUnit.MILLISECONDS.sleep(Math.round(seconds * 1000));
        System.out.println("end " + updates.get() + " " + elements.get() + " " + gaps.get());
        System.out.flush();
        Runtime.getRuntime().halt(0); // PVAClient.close() waits for its channels; the numbers are out
    }
}
