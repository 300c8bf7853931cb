package dev.ledger.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 that a test can break: {@link #cut()} closes every connection and
 * refuses new ones (a server gone away), {@link #delay(long)} holds every chunk back (a server
 * gone slow), {@link #refuseWith(byte[])} answers new connections with a refusal (a server that is up
 * but does not accept them), {@link #heal()} restores it. The real server behind it is never disturbed.
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final ExecutorService pumps = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tcp-proxy");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean cut;
    private volatile long delayMillis;
    private volatile byte[] refusal;
    /** Chunks read from clients, so a test can see that a request left the application. */
    private final AtomicLong fromClients = new AtomicLong();
    /** Chunks read but not yet written on (held back by a delay), in either direction. */
    private final AtomicInteger heldBack = new AtomicInteger();

    public TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        pumps.submit(this::acceptLoop);
    }

    public int port() {
        return listener.getLocalPort();
    }

    public void cut() {
        cut = true;
        closeOpenConnections();
    }

    public void delay(long millis) {
        delayMillis = millis;
    }

    /** How many chunks clients have written to the proxy so far: a mark to wait past. */
    public long chunksFromClients() {
        return fromClients.get();
    }

    /** How many chunks a delay still holds back; 0 once everything read has been passed on. */
    public int chunksHeldBack() {
        return heldBack.get();
    }

    /**
     * Closes every connection, then answers each new one with {@code answer} once the client has
     * written its first bytes, and closes it: a server that accepts connections only to refuse them
     * (for PostgreSQL, see {@link #postgresFatal}).
     */
    public void refuseWith(byte[] answer) {
        refusal = answer;
        closeOpenConnections();
    }

    private void closeOpenConnections() {
        for (Socket socket : open) {
            closeQuietly(socket);
        }
        open.clear();
    }

    /**
     * A PostgreSQL ErrorResponse of severity FATAL with {@code sqlState}, as the server answers a
     * startup message it refuses (protocol 3.0: 'E', length, then typed fields, each a C string).
     */
    public static byte[] postgresFatal(String sqlState, String message) {
        ByteArrayOutputStream fields = new ByteArrayOutputStream();
        for (String field : new String[]{"SFATAL", "VFATAL", "C" + sqlState, "M" + message}) {
            fields.writeBytes(field.getBytes(StandardCharsets.UTF_8));
            fields.write(0);
        }
        fields.write(0);
        ByteBuffer frame = ByteBuffer.allocate(1 + 4 + fields.size());
        frame.put((byte) 'E').putInt(4 + fields.size()).put(fields.toByteArray());
        return frame.array();
    }

    public void heal() {
        delayMillis = 0;
        refusal = null;
        cut = false;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                byte[] answer = refusal;
                if (answer != null) {
                    pumps.submit(() -> refuse(client, answer));
                    continue;
                }
                Socket upstream;
                try {
                    upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                } catch (IOException e) {
                    // the real server is gone: the client sees its connection closed, as it would without a proxy
                    closeQuietly(client);
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                open.add(client);
                open.add(upstream);
                pumps.submit(() -> pump(client, upstream, true));
                pumps.submit(() -> pump(upstream, client, false));
            } catch (IOException e) {
                if (listener.isClosed()) {
                    return;
                }
            }
        }
    }

    /** Copies one direction; with a delay, each chunk is written later, in order, by one scheduler. */
    private void pump(Socket from, Socket to, boolean fromClient) {
        ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tcp-proxy-writer");
            t.setDaemon(true);
            return t;
        });
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            byte[] buffer = new byte[16 * 1024];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                byte[] chunk = Arrays.copyOf(buffer, n);
                if (fromClient) {
                    fromClients.incrementAndGet();
                }
                heldBack.incrementAndGet();
                writer.schedule(() -> {
                    try {
                        out.write(chunk);
                        out.flush();
                    } catch (IOException e) {
                        closeQuietly(from);
                        closeQuietly(to);
                    } finally {
                        heldBack.decrementAndGet();
                    }
                }, delayMillis, TimeUnit.MILLISECONDS);
            }
        } catch (IOException ignored) {
            // connection closed or cut
        } finally {
            writer.schedule(() -> {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }, delayMillis, TimeUnit.MILLISECONDS);
            writer.shutdown();
        }
    }

    private static void refuse(Socket client, byte[] answer) {
        try (client) {
            client.getInputStream().read(new byte[8192]);
            client.getOutputStream().write(answer);
            client.getOutputStream().flush();
        } catch (IOException ignored) {
            // the client left first
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        cut();
        listener.close();
        pumps.shutdownNow();
    }
}
