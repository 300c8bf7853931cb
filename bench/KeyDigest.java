import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What authenticating an API key costs the service per request, against what a cache of keys would: the
 * key's SHA-256 as {@code dev.ledger.security.ApiKeys} makes it ({@code MessageDigest.getInstance} and
 * {@code digest}), the same from a cloned prototype digest, and a map lookup by the raw key (what a cache
 * of presented keys would do, holding the raw keys in memory). Each timed over ROUNDS of a million calls
 * after a warm-up, on one thread, with the JVM running it; prints nanoseconds per call for each round.
 *
 * <pre>java bench/KeyDigest.java [ROUNDS]</pre>
 */
public class KeyDigest {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int calls = 1_000_000;
        // a 36-character key, as the benchmark's and the tests' keys are
        String key = "bench-key-0123456789abcdef0123456789";
        MessageDigest prototype = MessageDigest.getInstance("SHA-256");
        Map<String, String> cache = new ConcurrentHashMap<>(Map.of(new String(key.toCharArray()), "client"));
        long sink = 0;
        for (int round = -2; round < rounds; round++) { // two rounds of warm-up first
            long start = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8))[0];
            }
            long digested = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += ((MessageDigest) prototype.clone()).digest(key.getBytes(StandardCharsets.UTF_8))[0];
            }
            long cloned = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                // a new String per call, as each request's header gives one
                sink += cache.get(new String(key.toCharArray())).length();
            }
            long looked = System.nanoTime();
            if (round >= 0) {
                System.out.printf("round %d: SHA-256 (getInstance) %.0f ns, SHA-256 (cloned) %.0f ns, map lookup %.0f ns%n",
                        round + 1, (digested - start) / (double) calls, (cloned - digested) / (double) calls,
                        (looked - cloned) / (double) calls);
            }
        }
        System.out.println(sink == 42 ? "" : "done");
    }
}
