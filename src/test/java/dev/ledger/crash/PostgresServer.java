package dev.ledger.crash;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of the test's own (initdb in a temporary folder, its own port, trust
 * auth), so that a test can crash and restart it without touching the shared server. PostgreSQL
 * refuses to run as root: as root, its commands run as the {@code postgres} user.
 */
public final class PostgresServer implements AutoCloseable {
    private final Path dataDir;
    private final Path bin;
    private final int port;

    public PostgresServer() throws IOException, InterruptedException {
        this.bin = findBin();
        try (ServerSocket socket = new ServerSocket(0)) {
            this.port = socket.getLocalPort();
        }
        this.dataDir = Files.createTempDirectory("ledger-crash-pg-");
        if (isRoot()) {
            run("chown", "postgres", dataDir.toString());
        }
        run(asPostgres(bin.resolve("initdb").toString(), "-D", dataDir.resolve("data").toString(), "-U", "postgres",
                "-A", "trust", "--no-sync", "-E", "UTF8"));
        start();
    }

    public int port() {
        return port;
    }

    public String host() {
        return "127.0.0.1:" + port;
    }

    public Connection connect(String database) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + host() + "/" + database, "postgres", "");
    }

    public void start() throws IOException, InterruptedException {
        run(asPostgres(bin.resolve("pg_ctl").toString(), "-D", dataDir.resolve("data").toString(),
                "-l", dataDir.resolve("server.log").toString(), "-w", "-t", "60",
                "-o", "-p " + port + " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + dataDir
                        + " -c fsync=off -c max_connections=100", "start"));
    }

    /** An immediate stop: no checkpoint, connections cut, recovery at the next start (a crash). */
    public void crash() throws IOException, InterruptedException {
        run(asPostgres(bin.resolve("pg_ctl").toString(), "-D", dataDir.resolve("data").toString(),
                "-m", "immediate", "-w", "-t", "60", "stop"));
    }

    public void restart() throws IOException, InterruptedException {
        crash();
        start();
    }

    @Override
    public void close() throws Exception {
        try {
            crash();
        } finally {
            try (Stream<Path> files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    /** Whether a PostgreSQL server installation (initdb) is there to start one. */
    public static boolean installed() {
        try {
            return Files.isExecutable(findBin().resolve("initdb"));
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static List<String> asPostgres(String... command) {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(Arrays.asList(command));
        return full;
    }

    private static void run(String... command) throws IOException, InterruptedException {
        run(Arrays.asList(command));
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + output);
        }
    }

    /** The newest installed PostgreSQL's binaries (Debian layout), or those on the PATH. */
    private static Path findBin() throws IOException {
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
                        .max(Comparator.comparingInt(b -> Integer.parseInt(b.getParent().getFileName().toString())))
                        .orElseThrow(() -> new IOException("no initdb under /usr/lib/postgresql"));
            }
        }
        return Path.of("/usr/bin");
    }
}
