package dev.ledger.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.outbox.EventTap;
import dev.ledger.testing.Broker;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.Prometheus;
import dev.ledger.testing.SecondLane;
import dev.ledger.testing.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard and the alert rules of {@code ops/} against the packaged application: every metric they
 * name is in its {@code /q/metrics}, and a real Prometheus (Debian's, on a port and in a directory of its
 * own) scraping it every second sees an alert fire when its cause is produced and resolve when it is gone.
 * One application (events and commands over RabbitMQ, through a proxy the test can cut) for both.
 */
@SecondLane
class MonitoringIT {
    private static final Path RULES = Path.of("ops/prometheus/ledger-alerts.yml");
    private static final Path DASHBOARD = Path.of("ops/grafana/ledger-dashboard.json");
    private static final String API_KEY = "monitoring-it-key-0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Names only Kafka's door registers (this application has none): KafkaCommandsTest reads them. */
    private static final Set<String> KAFKA_ONLY = Set.of("ledger_commands_lag");
    /** The backlog rule's threshold (seconds) and the test's: the production rule waits 5 minutes. */
    private static final String BACKLOG = "max by (broker, shard) (ledger_events_oldest_unpublished_age_seconds) > ";

    /**
     * A database and a virtual host of its own: this class runs beside the others (docs/testing.md, "Two lanes"), and
     * its command from a sender without a key must reach its own application, not dev mode's in {@code FirstContactIT}.
     */
    private static final String DATABASE = PackagedApp.DATABASE + "_monitoring";
    private static final String VHOST = "ledger-monitoring-it";

    private static TcpProxy broker;
    private static PackagedApp app;
    private static Prometheus prometheus;

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(PackagedApp.configured(), "no local servers configured (tests.it.pg-host): skipped where Dev Services run");
        assumeTrue(Prometheus.installed(), "needs prometheus (bash .ci/services)");
        PackagedApp.recreateDatabase(DATABASE);
        EventTap.freshVirtualHost(VHOST);
        broker = new TcpProxy(EventTap.SHARED_PORT);
        Map<String, String> env = new HashMap<>(PackagedApp.onDatabase(DATABASE));
        env.putAll(Map.of(
                "LEDGER_API_KEYS", "it:" + PackagedApp.sha256Hex(API_KEY),
                "LEDGER_EVENTS_RABBITMQ_ENABLED", "true",
                "LEDGER_MESSAGING_RABBITMQ_ENABLED", "true",
                "RABBITMQ_HOST", "127.0.0.1",
                "RABBITMQ_PORT", Integer.toString(broker.port()),
                "RABBITMQ_VIRTUAL_HOST", VHOST,
                // no queue of the service's own piles up events on the shared broker
                "LEDGER_EVENTS_RABBITMQ_QUEUE", ""));
        app = PackagedApp.start(env, "monitoring-it.log");
        String rules = Files.readString(RULES);
        assertTrue(rules.contains(BACKLOG + "300"), "the backlog rule as the test knows it");
        // seconds instead of minutes: every rule's for:, and the backlog's age
        String shortened = rules.replace(BACKLOG + "300", BACKLOG + "3").replaceAll("(?m)^(\\s+for:) \\S+$", "$1 1s");
        prometheus = Prometheus.start(Path.of("target", "monitoring-it"), app.baseUrl(), shortened);
    }

    @AfterAll
    static void stop() throws Exception {
        if (prometheus != null) {
            prometheus.close();
        }
        if (app != null) {
            app.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void everyMetricTheDashboardAndTheRulesNameIsExposed() throws Exception {
        Set<String> names = new TreeSet<>();
        for (String expr : ruleExpressions(Files.readString(RULES))) {
            names.addAll(metricNames(expr));
        }
        List<String> dashboard = new ArrayList<>();
        collectQueries(JSON.readTree(DASHBOARD.toFile()), dashboard);
        dashboard.forEach(query -> names.addAll(metricNames(query)));
        assertTrue(names.containsAll(Set.of("ledger_idempotency_requests_seconds_count", "ledger_dependency_calls_seconds_bucket",
                "ledger_events_oldest_unpublished_age_seconds", "resilience4j_circuitbreaker_state")), names.toString());

        // each series produced: a payment, its replay, a command (dead-lettered: from a sender with no key), events
        String account = openAccount();
        String key = "pay-" + System.nanoTime();
        String body = "{\"type\":\"CREDIT\",\"amount\":5,\"sequence\":1}";
        assertEquals(201, app.post("/accounts/" + account + "/transactions", API_KEY, key, body).statusCode());
        assertEquals(201, app.post("/accounts/" + account + "/transactions", API_KEY, key, body).statusCode());
        try (Broker guest = Broker.as("guest", "guest", EventTap.SHARED_PORT, VHOST)) {
            guest.publish(Broker.command("cmd-" + System.nanoTime(), "guest", null).build(), body);
        }
        names.removeAll(KAFKA_ONLY);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            String exposed = app.get("/q/metrics", null).body();
            List<String> missing = names.stream().filter(name -> !exposed.contains("\n" + name + "{")
                    && !exposed.contains("\n" + name + " ")).toList();
            assertEquals(List.of(), missing, "named in ops/ but not in /q/metrics");
        });
        // one database (no ledger.shards.*): the series as they always were, no shard label, which the rules' and the
        // dashboard's "by (..., shard)" and shard=~".*" then leave out
        String exposed = app.get("/q/metrics", null).body();
        assertTrue(exposed.contains("\nledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"ok\"} "),
                "the statements' series without a shard");
        List<String> sharded = exposed.lines().filter(line -> line.startsWith("ledger_") && line.contains("shard=")).toList();
        assertEquals(List.of(), sharded, "series tagged shard without shards");
    }

    @Test
    void theEventsBacklogAlertFiresWhileTheBrokerIsAwayAndResolvesWhenItIsBack() throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> prometheus.targetUp());
        assertFalse(prometheus.firing("LedgerEventsBacklogGrowing"));

        broker.cut();
        long cut = System.nanoTime();
        long fired;
        try {
            openAccount(); // its event waits in PostgreSQL
            await().atMost(Duration.ofSeconds(60)).until(() -> prometheus.firing("LedgerEventsBacklogGrowing"));
            fired = System.nanoTime();
        } finally {
            broker.heal();
        }
        await().atMost(Duration.ofSeconds(90)).until(() -> !prometheus.active("LedgerEventsBacklogGrowing"));
        System.out.printf("[monitoring] LedgerEventsBacklogGrowing fired %d ms after the broker was cut, resolved %d ms after it was back%n",
                (fired - cut) / 1_000_000, (System.nanoTime() - fired) / 1_000_000);
    }

    @Test
    void everyDashboardQueryRunsAndTheShardFilterKeepsTheSeriesOfOneDatabase() throws Exception {
        JsonNode dashboard = JSON.readTree(DASHBOARD.toFile());
        JsonNode shard = null;
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            shard = "shard".equals(variable.path("name").asText()) ? variable : shard;
        }
        assertTrue(shard != null && shard.path("includeAll").asBoolean(), "the dashboard's shard variable, with All");
        String all = shard.path("allValue").asText();
        List<String> queries = new ArrayList<>();
        collectQueries(dashboard.path("panels"), queries);
        // as Grafana sends them with every door and "All" shards chosen
        List<String> sent = queries.stream().map(query -> query.replace("$shard", all).replace("$transport", ".*")
                .replace("$__rate_interval", "1m")).toList();
        String statements = sent.stream().filter(query -> query.startsWith("sum by (shard) (rate(ledger_dependency_calls_seconds_count"
                + "{dependency=\"postgres\",shard=~")).findFirst().orElseThrow();
        openAccount();
        await().atMost(Duration.ofSeconds(30)).until(() -> prometheus.series(statements) > 0);
        int answered = 0;
        for (String query : sent) {
            answered += prometheus.series(query) > 0 ? 1 : 0;
        }
        System.out.printf("[monitoring] %d dashboard queries ran in Prometheus, %d with series; PostgreSQL's statements by shard "
                + "without shards: %d series%n", sent.size(), answered, prometheus.series(statements));
    }

    /** The {@code expr} of every target of the dashboard's panels. */
    private static void collectQueries(JsonNode node, List<String> queries) {
        if (node.isObject() && node.has("expr")) {
            queries.add(node.get("expr").asText());
        }
        node.forEach(child -> collectQueries(child, queries));
    }

    private static String openAccount() throws Exception {
        HttpResponse<String> opened = app.post("/accounts", API_KEY, "open-" + System.nanoTime(), "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        return JSON.readTree(opened.body()).get("id").asText();
    }

    /** The {@code expr:} of each rule: on its line, or folded ({@code >-}) on the more indented lines below. */
    static List<String> ruleExpressions(String rules) {
        List<String> expressions = new ArrayList<>();
        String[] lines = rules.split("\n");
        for (int i = 0; i < lines.length; i++) {
            Matcher expr = Pattern.compile("^(\\s*)expr:\\s*(.*)$").matcher(lines[i]);
            if (!expr.matches()) {
                continue;
            }
            StringBuilder text = new StringBuilder(expr.group(2).startsWith(">") ? "" : expr.group(2));
            int indent = expr.group(1).length();
            while (i + 1 < lines.length && lines[i + 1].length() - lines[i + 1].stripLeading().length() > indent) {
                text.append(' ').append(lines[++i].strip());
            }
            expressions.add(text.toString());
        }
        return expressions;
    }

    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset");

    /** The metric names of a PromQL expression: its identifiers but functions, keywords, labels and label values. */
    static Set<String> metricNames(String expr) {
        String bare = expr.replaceAll("\"[^\"]*\"", "")
                .replaceAll("\\{[^}]*}", "")
                .replaceAll("\\[[^]]*]", "")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", "");
        Set<String> names = new TreeSet<>();
        Matcher identifier = IDENTIFIER.matcher(bare);
        while (identifier.find()) {
            String name = identifier.group();
            int end = identifier.end();
            boolean function = end < bare.length() && bare.substring(end).stripLeading().startsWith("(");
            if (!function && !KEYWORDS.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }
}
