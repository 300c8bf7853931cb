package dev.ledger.failure;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy on 127.0.0.1 that a test can break: {@link #cut()} closes every connection and
 * refuses new ones (a server gone away), {@link #delay(long)} holds every chunk back (a server
 * gone slow), {@link #heal()} restores it. The real server behind it is never disturbed.
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
        for (Socket socket : open) {
            closeQuietly(socket);
        }
        open.clear();
    }

    public void delay(long millis) {
        delayMillis = millis;
    }

    public void heal() {
        delayMillis = 0;
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
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                open.add(client);
                open.add(upstream);
                pumps.submit(() -> pump(client, upstream));
                pumps.submit(() -> pump(upstream, client));
            } catch (IOException e) {
                if (listener.isClosed()) {
                    return;
                }
            }
        }
    }

    /** Copies one direction; with a delay, each chunk is written later, in order, by one scheduler. */
    private void pump(Socket from, Socket to) {
        ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tcp-proxy-writer");
            t.setDaemon(true);
            return t;
        });
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            byte[] buffer = new byte[16 * 1024];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                byte[] chunk = java.util.Arrays.copyOf(buffer, n);
                writer.schedule(() -> {
                    try {
                        out.write(chunk);
                        out.flush();
                    } catch (IOException e) {
                        closeQuietly(from);
                        closeQuietly(to);
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
