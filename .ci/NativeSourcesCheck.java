import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Checks what `./mvnw package -Dnative -Dquarkus.native.sources-only=true` generated: the inputs
 * native-image would get. It cannot build the image; it checks that the configuration this
 * application relies on is in those inputs:
 * <ul>
 *   <li>every Lua script, every migration and the AsyncAPI document and page under src/main/resources are matched by a resource
 *       pattern of the image (resource-config.json, Java regular expressions);</li>
 *   <li>every class Jackson writes (the views, the problem body, the event body) is registered for reflection;</li>
 *   <li>the classes holding Jackson mappers in static fields are initialised at run time.</li>
 * </ul>
 * Run by `.ci/native-sources` as `java .ci/NativeSourcesCheck.java` (no dependencies: the JSON is
 * read with regular expressions, enough for the flat files Quarkus writes).
 */
public class NativeSourcesCheck {
    static final List<String> SERIALISED = List.of(
            "dev.ledger.account.AccountView",
            "dev.ledger.transaction.TransactionView",
            "dev.ledger.transaction.TransactionPage",
            "dev.ledger.problem.Problem",
            "dev.ledger.outbox.EventEnvelope");
    static final List<String> RUNTIME_INITIALISED = List.of(
            "dev.ledger.input.JsonBody",
            "dev.ledger.idempotency.RequestFingerprint");

    public static void main(String[] args) throws IOException {
        Path sources = Path.of(args.length > 0 ? args[0] : "target/native-sources");
        List<String> failures = new ArrayList<>();

        Path argsFile = sources.resolve("native-image.args");
        if (!Files.exists(argsFile)) {
            fail("no " + argsFile + ": run ./mvnw package -Dnative -Dquarkus.native.sources-only=true first");
        }
        String nativeArgs = Files.readString(argsFile);
        Path runner;
        try (Stream<Path> files = Files.list(sources)) {
            runner = files.filter(p -> p.getFileName().toString().endsWith("-runner.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no *-runner.jar in " + sources));
        }

        String resourceConfig;
        String reflectConfig;
        try (ZipFile jar = new ZipFile(runner.toFile())) {
            resourceConfig = entry(jar, "META-INF/native-image/resource-config.json");
            reflectConfig = entry(jar, "META-INF/native-image/reflect-config.json");
        }

        List<Pattern> includes = new ArrayList<>();
        Matcher pattern = Pattern.compile("\"pattern\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(resourceConfig);
        while (pattern.find()) {
            includes.add(Pattern.compile(unescapeJson(pattern.group(1))));
        }
        List<String> resources = new ArrayList<>();
        Path main = Path.of("src/main/resources");
        for (String dir : List.of("redis", "db/migration")) {
            try (Stream<Path> files = Files.list(main.resolve(dir))) {
                files.map(p -> main.relativize(p).toString().replace('\\', '/')).sorted().forEach(resources::add);
            }
        }
        // read from the classpath by MessageDocument
        resources.addAll(List.of("asyncapi.yaml", "asyncapi-ui.html"));
        for (String resource : resources) {
            boolean included = includes.stream().anyMatch(p -> p.matcher(resource).matches());
            System.out.println((included ? "ok    " : "FAIL  ") + "resource in the image: " + resource);
            if (!included) {
                failures.add("resource not in the image: " + resource);
            }
        }

        for (String type : SERIALISED) {
            Matcher entry = Pattern.compile("\\{[^{}]*\"name\"\\s*:\\s*\"" + Pattern.quote(type) + "\"[^{}]*}")
                    .matcher(reflectConfig);
            boolean registered = false;
            while (entry.find()) {
                String json = entry.group();
                registered |= json.contains("\"allDeclaredMethods\": true") || json.contains("\"allDeclaredMethods\":true");
            }
            System.out.println((registered ? "ok    " : "FAIL  ") + "registered for reflection (methods): " + type);
            if (!registered) {
                failures.add("not registered for reflection with its methods: " + type);
            }
        }

        for (String type : RUNTIME_INITIALISED) {
            boolean runtime = nativeArgs.contains("--initialize-at-run-time=" + type);
            System.out.println((runtime ? "ok    " : "FAIL  ") + "initialised at run time: " + type);
            if (!runtime) {
                failures.add("not initialised at run time: " + type);
            }
        }

        if (!failures.isEmpty()) {
            fail(String.join("\n", failures));
        }
        System.out.println("native sources: " + resources.size() + " resources, " + SERIALISED.size()
                + " serialised classes, " + RUNTIME_INITIALISED.size() + " run-time initialisations checked");
    }

    private static String entry(ZipFile jar, String name) throws IOException {
        ZipEntry entry = jar.getEntry(name);
        if (entry == null) {
            fail("no " + name + " in " + jar.getName());
        }
        try (InputStream in = jar.getInputStream(entry)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static String unescapeJson(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char next = s.charAt(++i);
                switch (next) {
                    case 'u' -> {
                        out.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    default -> out.append(next); // \" \\ \/
                }
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static void fail(String message) {
        System.err.println("native sources check failed:\n" + message);
        System.exit(1);
    }
}
