package epicsperf;

import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.epics.pva.PVASettings;
import org.epics.pva.data.PVADouble;
import org.epics.pva.data.PVAInt;
import org.epics.pva.data.PVALongArray;
import org.epics.pva.data.PVAString;
import org.epics.pva.data.PVAStructure;
import org.epics.pva.data.nt.PVATimeStamp;
import org.epics.pva.server.PVAServer;
import org.epics.pva.server.ServerPV;

/**
 * A PV Access server on Phoebus's core-pva (PVAServer), for the Secure PV Access tests: TLS when
 * EPICS_PVAS_TLS_KEYCHAIN names a keychain (and EPICS_PVAS_TLS_OPTIONS=client_cert=require to
 * refuse clients without a certificate), plain TCP always. Ports and interfaces come from the
 * EPICS_PVA*_ environment as core-pva reads it.
 * <ul>
 * <li>PREFIX:DOUBLE, a writable double (NTScalar: value, alarm, timeStamp);
 * <li>PREFIX:COUNTER, a double counting up at 10 Hz;
 * <li>PREFIX:WHOAMI, a string: a put of anything makes it hold how the server saw the writer,
 *     "x509/Fred F." or "ca/user";
 * <li>with COUNTERS (second argument), PREFIX:C1..COUNTERS, doubles counting up together at 10 Hz;
 * <li>with ELEMENTS (third argument), PREFIX:ARRAY, ELEMENTS int64 that all hold k in update k,
 *     published as fast as one thread makes them (core-pva sends an update whole: a server whose
 *     EPICS_PVA_SEND_BUFFER_SIZE, 8,001,000 bytes by default, is smaller drops every update).
 * </ul>
 * Prints "ready TCP_PORT TLS_PORT" (TLS_PORT 0 without TLS) on stdout, then serves until stdin closes.
 */
public final class TlsServer {
    public static void main(String[] args) throws Exception {
        Logger.getLogger("org.epics.pva").setLevel(Level.WARNING);
        final String prefix = args.length > 0 ? args[0] : "TLS:";
        final int counters = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        final int elements = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        try (PVAServer server = new PVAServer()) {
            server.createPV(prefix + "DOUBLE", scalar(new PVADouble("value", 0)), (tcp, pv, changes, written) -> pv.update(written));
            final PVAStructure counter = scalar(new PVADouble("value", 0));
            final ServerPV counterPv = server.createPV(prefix + "COUNTER", counter);
            server.createPV(prefix + "WHOAMI", scalar(new PVAString("value", "")), (tcp, pv, changes, written) -> {
                final InetSocketAddress from = tcp.getRemoteAddress();
                String who = "unknown";
                for (PVAServer.ClientInfo info : server.getClientInfos())
                    if (info.address().equals(from))
                        who = info.authentication().getType().name() + "/" + info.authentication().getUser();
                final PVAStructure value = scalar(new PVAString("value", who));
                pv.update(value);
            });
            final PVAStructure[] many = new PVAStructure[counters];
            final ServerPV[] manyPvs = new ServerPV[counters];
            for (int i = 0; i < counters; i++) {
                many[i] = scalar(new PVADouble("value", 0));
                manyPvs[i] = server.createPV(prefix + "C" + (i + 1), many[i]);
            }
            final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
            timer.scheduleAtFixedRate(() -> {
                try {
                    step(counter, counterPv);
                    for (int i = 0; i < counters; i++)
                        step(many[i], manyPvs[i]);
                } catch (Exception ex) {
                    System.err.println("counter: " + ex);
                }
            }, 100, 100, TimeUnit.MILLISECONDS);
            if (elements > 0) {
                final ServerPV arrayPv = server.createPV(prefix + "ARRAY", scalar(new PVALongArray("value", false, new long[elements])));
                final Thread publisher = new Thread(() -> {
                    try {
                        for (long k = 1; !Thread.currentThread().isInterrupted(); k++) {
                            final long[] a = new long[elements];
                            java.util.Arrays.fill(a, k);
                            final PVAStructure update = scalar(new PVALongArray("value", false, a));
                            PVATimeStamp.set(update, java.time.Instant.now());
                            arrayPv.update(update);
                        }
                    } catch (Exception ex) {
                        System.err.println("array: " + ex);
                    }
                }, "array");
                publisher.setDaemon(true);
                publisher.start();
            }
            final InetSocketAddress tls = tlsAddress(server);
            System.out.println("ready " + server.getTCPAddress(false).getPort() + " " + (tls == null ? 0 : tls.getPort()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until stdin closes
            }
            timer.shutdownNow();
        }
        System.exit(0);
    }

    /** Count `value` up by one, stamped now. */
    private static void step(PVAStructure s, ServerPV pv) throws Exception {
        final PVADouble v = s.get("value");
        v.set(v.get() + 1);
        PVATimeStamp.set(s, java.time.Instant.now());
        pv.update(s);
    }

    private static InetSocketAddress tlsAddress(PVAServer server) {
        return PVASettings.EPICS_PVAS_TLS_KEYCHAIN.isBlank() ? null : server.getTCPAddress(true);
    }

    /** An NTScalar-like structure holding `value`, an alarm and a time stamp. */
    private static PVAStructure scalar(org.epics.pva.data.PVAData value) {
        return new PVAStructure("", "epics:nt/NTScalar:1.0", value,
                new PVAStructure("alarm", "alarm_t", new PVAInt("severity", 0), new PVAInt("status", 0), new PVAString("message", "")),
                new PVATimeStamp());
    }
}
