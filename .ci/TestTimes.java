import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Prints how long each test class took, slowest first, with each phase's sum, from the surefire and
 * failsafe reports (target/*-reports/TEST-*.xml). Run by .ci/run after the test command, whatever it
 * returned, as `java .ci/TestTimes.java`; no dependencies (the suite's attributes are read with a
 * regular expression).
 */
public class TestTimes {
    private static final Pattern SUITE = Pattern.compile("<testsuite\\b[^>]*>");
    private static final Pattern ATTRIBUTE = Pattern.compile("\\b(name|time|tests|failures|errors)=\"([^\"]*)\"");

    record Suite(String phase, String name, double seconds, int tests, int failed) {
    }

    public static void main(String[] args) throws IOException {
        List<Suite> suites = new ArrayList<>();
        for (String phase : List.of("surefire", "failsafe")) {
            Path reports = Path.of("target", phase + "-reports");
            if (!Files.isDirectory(reports)) {
                continue;
            }
            try (Stream<Path> files = Files.list(reports)) {
                for (Path file : files.filter(f -> f.getFileName().toString().matches("TEST-.*\\.xml")).toList()) {
                    Matcher suite = SUITE.matcher(Files.readString(file));
                    if (!suite.find()) {
                        continue;
                    }
                    String name = "?";
                    double seconds = 0;
                    int tests = 0;
                    int failed = 0;
                    Matcher attribute = ATTRIBUTE.matcher(suite.group());
                    while (attribute.find()) {
                        String value = attribute.group(2);
                        switch (attribute.group(1)) {
                            case "name" -> name = value;
                            case "time" -> seconds = Double.parseDouble(value.replace(",", ""));
                            case "tests" -> tests = Integer.parseInt(value);
                            default -> failed += Integer.parseInt(value);
                        }
                    }
                    suites.add(new Suite(phase, name, seconds, tests, failed));
                }
            }
        }
        System.out.println("Test classes by time (slowest first):");
        suites.stream().sorted(Comparator.comparingDouble(Suite::seconds).reversed()).forEach(suite ->
                System.out.printf("%8.1f s  %-8s %-70s %3d tests%s%n", suite.seconds(), suite.phase(), suite.name(),
                        suite.tests(), suite.failed() > 0 ? ", " + suite.failed() + " failed" : ""));
        for (String phase : List.of("surefire", "failsafe")) {
            System.out.printf("%s: %d classes, %d tests, %.0f s in test classes%n", phase,
                    suites.stream().filter(s -> s.phase().equals(phase)).count(),
                    suites.stream().filter(s -> s.phase().equals(phase)).mapToInt(Suite::tests).sum(),
                    suites.stream().filter(s -> s.phase().equals(phase)).mapToDouble(Suite::seconds).sum());
        }
    }
}
