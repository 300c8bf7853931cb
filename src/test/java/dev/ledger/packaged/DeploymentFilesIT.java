package dev.ledger.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ledger.testing.LedgerSettings;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What runs the application (the images under src/main/docker, compose.yaml, the Kubernetes
 * manifests quarkus-kubernetes wrote at package time) agrees with what the application really
 * reads and serves: every environment variable they set is one of its settings, the port is its
 * port, the health paths are the ones {@link ContractIT} finds answering. Runs in failsafe, after
 * target/kubernetes/kubernetes.yml exists.
 */
class DeploymentFilesIT {
    /** The application's HTTP port (quarkus.http.port, not set: Quarkus' 8080). */
    static final int PORT = 8080;
    static final String LIVE = "/q/health/live";
    static final String READY = "/q/health/ready";
    static final String STARTED = "/q/health/started";
    /** The standard Quarkus settings the service is configured with (docs/configuration.md). */
    static final Set<String> QUARKUS_SETTINGS = Set.of("QUARKUS_HTTP_PORT", "QUARKUS_DATASOURCE_REACTIVE_URL",
            "QUARKUS_DATASOURCE_JDBC_URL", "QUARKUS_DATASOURCE_USERNAME", "QUARKUS_DATASOURCE_PASSWORD", "QUARKUS_REDIS_HOSTS",
            "QUARKUS_REDIS_CLIENT_TYPE", "QUARKUS_SHUTDOWN_DELAY", "QUARKUS_SHUTDOWN_TIMEOUT",
            "QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL",
            "QUARKUS_OTEL_TRACES_SAMPLER_ARG", "QUARKUS_OTEL_SDK_DISABLED", "QUARKUS_LOG_CONSOLE_JSON_ENABLED");
    /** The bound on finishing in-flight requests after SIGTERM (quarkus.shutdown.timeout in application.properties). */
    static final Path APPLICATION_PROPERTIES = Path.of("src/main/resources/application.properties");
    static final List<String> DOCKERFILES = List.of("Dockerfile.jvm", "Dockerfile.native", "Dockerfile.native-micro",
            "Dockerfile.native-build");
    /** Where the settings are documented: the table under "## Settings". */
    static final Path CONFIGURATION_DOC = Path.of("docs/configuration.md");
    /** Where the operator creates the Kubernetes Secret (a kubectl create secret command). */
    static final Path DEPLOYMENT_DOC = Path.of("docs/deployment.md");
    static final String SECRET_COMMAND = "kubectl create secret in " + DEPLOYMENT_DOC;

    private static final YAMLMapper YAML = new YAMLMapper();

    /** LEDGER_* of every setting in LedgerConfig, as SmallRye Config maps environment variables. */
    static Set<String> ledgerSettings() {
        return LedgerSettings.environmentVariables();
    }

    static Set<String> applicationSettings() {
        Set<String> all = new TreeSet<>(ledgerSettings());
        all.addAll(QUARKUS_SETTINGS);
        return all;
    }

    @Test
    void theConfigurationTableListsExactlyTheSettingsTheApplicationReads() throws IOException {
        String section = section(CONFIGURATION_DOC, "Settings");
        Set<String> documented = new TreeSet<>();
        Matcher variable = Pattern.compile("`((?:LEDGER|QUARKUS)_[A-Z0-9_<>]+)`").matcher(section);
        while (variable.find()) {
            documented.add(variable.group(1));
        }
        // nested groups and optional values were walked
        assertTrue(ledgerSettings().containsAll(List.of("LEDGER_API_KEYS", "LEDGER_AUTH_ENABLED",
                "LEDGER_IDEMPOTENCY_PURGE_BATCH_SIZE", "LEDGER_REQUEST_MAX_BODY_BYTES", "LEDGER_FAST_PATH_BREAKER_DELAY")),
                ledgerSettings().toString());
        assertEquals(applicationSettings(), documented);
    }

    @Test
    void everyEnvironmentVariableTheFilesSetIsOneTheApplicationReads() throws IOException {
        Map<String, List<String>> setBy = Map.of(
                "compose.yaml (ledger)", names(compose().path("services").path("ledger").path("environment")),
                "compose.cluster.yaml (ledger)", names(composeCluster().path("services").path("ledger").path("environment")),
                "ConfigMap", names(configMap().path("data")),
                SECRET_COMMAND, secretKeysInDeploymentDoc());
        for (Map.Entry<String, List<String>> file : setBy.entrySet()) {
            assertFalse(file.getValue().isEmpty(), file.getKey() + " sets nothing");
            List<String> unknown = new ArrayList<>(file.getValue());
            unknown.removeAll(applicationSettings());
            assertTrue(unknown.isEmpty(), file.getKey() + " sets what the application does not read: " + unknown);
        }
        // The secrets are in the Secret, not the ConfigMap, and the Secret has them all.
        List<String> secrets = List.of("QUARKUS_DATASOURCE_USERNAME", "QUARKUS_DATASOURCE_PASSWORD", "LEDGER_API_KEYS");
        assertTrue(setBy.get(SECRET_COMMAND).containsAll(secrets), setBy.get(SECRET_COMMAND).toString());
        assertTrue(setBy.get("ConfigMap").stream().noneMatch(secrets::contains), setBy.get("ConfigMap").toString());
        // The probes and the Service use 8080: the port is not something the ConfigMap may change.
        assertFalse(setBy.get("ConfigMap").contains("QUARKUS_HTTP_PORT"));
    }

    @Test
    void kubernetesRunsTwoReplicasWithProbesResourcesConfigMapAndSecret() throws IOException {
        JsonNode deployment = kubernetes("Deployment");
        assertTrue(deployment.path("spec").path("replicas").asInt() >= 2, "replicas");
        JsonNode pod = deployment.path("spec").path("template").path("spec");
        assertTrue(pod.path("securityContext").path("runAsNonRoot").asBoolean(), "runAsNonRoot");
        JsonNode container = pod.path("containers").get(0);
        assertEquals(PORT, container.path("ports").get(0).path("containerPort").asInt());
        assertProbe(container.path("livenessProbe"), LIVE);
        assertProbe(container.path("readinessProbe"), READY);
        assertProbe(container.path("startupProbe"), STARTED);

        JsonNode resources = container.path("resources");
        long requested = mebibytes(resources.path("requests").path("memory").asText());
        long limit = mebibytes(resources.path("limits").path("memory").asText());
        assertTrue(requested > 0 && limit >= requested, "memory request " + requested + " Mi, limit " + limit + " Mi");
        // Above what the JVM was measured to hold after a load (docs/performance.md), heap bounded to half of it.
        assertTrue(limit >= 640, "memory limit " + limit + " Mi");
        assertFalse(resources.path("requests").path("cpu").isMissingNode());
        assertFalse(resources.path("limits").path("cpu").isMissingNode());

        List<String> configMaps = new ArrayList<>();
        List<String> secrets = new ArrayList<>();
        for (JsonNode source : container.path("envFrom")) {
            if (source.has("configMapRef")) {
                configMaps.add(source.path("configMapRef").path("name").asText());
            }
            if (source.has("secretRef")) {
                secrets.add(source.path("secretRef").path("name").asText());
            }
        }
        assertEquals(List.of(configMap().path("metadata").path("name").asText()), configMaps);
        assertEquals(1, secrets.size());
        assertTrue(Files.readString(DEPLOYMENT_DOC).contains("kubectl create secret generic " + secrets.get(0)),
                DEPLOYMENT_DOC + " creates the Secret " + secrets.get(0));

        JsonNode service = kubernetes("Service");
        assertEquals(PORT, service.path("spec").path("ports").get(0).path("targetPort").asInt());
        assertConnectionUrls(configMap().path("data"));
    }

    @Test
    void imagesRunAsNonRootExposeThePortAndCheckLiveness() throws IOException {
        for (String name : DOCKERFILES) {
            String dockerfile = Files.readString(Path.of("src/main/docker", name));
            String user = last(Pattern.compile("(?m)^USER\\s+(\\S+)"), dockerfile);
            assertNotNull(user, name + " sets no USER");
            assertTrue(user.matches("[1-9][0-9]*(:.*)?"), name + " runs as " + user + ": a numeric uid other than 0");
            assertEquals(Integer.toString(PORT), last(Pattern.compile("(?m)^EXPOSE\\s+(\\d+)"), dockerfile), name);
            String healthcheck = last(Pattern.compile("(?m)^\\s*CMD (\\[.*])\\s*$"), dockerfile);
            assertNotNull(healthcheck, name + " has no HEALTHCHECK CMD");
            String command = String.join(" ", new ObjectMapper().readValue(healthcheck, String[].class));
            assertTrue(command.contains("${QUARKUS_HTTP_PORT:-" + PORT + "}") && command.contains("GET " + LIVE + " "),
                    name + ": " + command);
        }
    }

    @Test
    void composeRunsTheServiceWithPostgresAndRedisHealthChecksAndAVolume() throws IOException {
        JsonNode services = compose().path("services");
        JsonNode ledger = services.path("ledger");
        for (String dependency : List.of("postgres", "redis")) {
            assertEquals("service_healthy", ledger.path("depends_on").path(dependency).path("condition").asText(), dependency);
            assertFalse(services.path(dependency).path("healthcheck").path("test").isMissingNode(), dependency + " health check");
        }
        assertTrue(ledger.path("ports").get(0).asText().endsWith(":" + PORT), ledger.path("ports").toString());
        String healthcheck = String.join(" ", YAML.convertValue(ledger.path("healthcheck").path("test"), String[].class));
        assertTrue(healthcheck.contains("/dev/tcp/127.0.0.1/" + PORT) && healthcheck.contains("GET " + READY + " "), healthcheck);

        JsonNode environment = ledger.path("environment");
        assertConnectionUrls(environment);
        URI database = URI.create(environment.path("QUARKUS_DATASOURCE_REACTIVE_URL").asText());
        JsonNode postgres = services.path("postgres");
        assertFalse(services.path(database.getHost()).isMissingNode(), "PostgreSQL host " + database.getHost() + " is a service");
        assertEquals("/" + postgres.path("environment").path("POSTGRES_DB").asText(), database.getPath());
        assertEquals(postgres.path("environment").path("POSTGRES_USER").asText(), environment.path("QUARKUS_DATASOURCE_USERNAME").asText());
        assertEquals(postgres.path("environment").path("POSTGRES_PASSWORD").asText(), environment.path("QUARKUS_DATASOURCE_PASSWORD").asText());
        assertFalse(services.path(URI.create(environment.path("QUARKUS_REDIS_HOSTS").asText()).getHost()).isMissingNode(),
                "Redis host is a service");

        String volume = postgres.path("volumes").get(0).asText();
        assertTrue(volume.endsWith(":/var/lib/postgresql/data"), volume);
        assertTrue(compose().path("volumes").has(volume.substring(0, volume.indexOf(':'))), "named volume " + volume);
    }

    @Test
    void kubernetesRollsOutOneReadyReplicaAtATimeWithinADisruptionBudgetOnARedisCluster() throws IOException {
        JsonNode deployment = kubernetes("Deployment");
        int replicas = deployment.path("spec").path("replicas").asInt();
        assertTrue(replicas >= 3, "replicas " + replicas);
        JsonNode strategy = deployment.path("spec").path("strategy");
        assertEquals("RollingUpdate", strategy.path("type").asText(), strategy.toString());
        // a replica goes only once its successor is ready
        assertEquals(0, strategy.path("rollingUpdate").path("maxUnavailable").asInt(-1), strategy.toString());
        assertTrue(strategy.path("rollingUpdate").path("maxSurge").asInt() >= 1, strategy.toString());

        JsonNode budget = kubernetes("PodDisruptionBudget");
        JsonNode podLabels = deployment.path("spec").path("template").path("metadata").path("labels");
        budget.path("spec").path("selector").path("matchLabels").fields().forEachRemaining(label ->
                assertEquals(label.getValue().asText(), podLabels.path(label.getKey()).asText(), "the budget selects the pods"));
        assertFalse(budget.path("spec").path("selector").path("matchLabels").isEmpty());
        int mayGo = budget.path("spec").has("maxUnavailable") ? budget.path("spec").path("maxUnavailable").asInt()
                : replicas - budget.path("spec").path("minAvailable").asInt();
        assertTrue(mayGo >= 1 && mayGo < replicas, "voluntary disruptions allowed at once: " + mayGo);

        JsonNode settings = configMap().path("data");
        assertEquals("cluster", settings.path("QUARKUS_REDIS_CLIENT_TYPE").asText());
        List<String> hosts = List.of(settings.path("QUARKUS_REDIS_HOSTS").asText().split(","));
        assertTrue(hosts.size() >= 3 && hosts.stream().allMatch(host -> host.startsWith("redis://")), hosts.toString());
        // SIGTERM, then the delay and the in-flight bound, all before Kubernetes' SIGKILL
        long grace = deployment.path("spec").path("template").path("spec").path("terminationGracePeriodSeconds").asLong(30);
        long needed = seconds(settings.path("QUARKUS_SHUTDOWN_DELAY").asText()) + shutdownTimeoutSeconds();
        assertTrue(needed < grace, "shutdown delay + timeout " + needed + " s within the grace period " + grace + " s");
    }

    @Test
    void composeClusterRunsSeveralInstancesBehindHAProxyOnARedisCluster() throws IOException {
        JsonNode services = composeCluster().path("services");
        JsonNode ledger = services.path("ledger");
        int replicas = ledger.path("deploy").path("replicas").asInt();
        assertTrue(replicas >= 2, "ledger replicas " + replicas);
        JsonNode environment = ledger.path("environment");
        assertConnectionUrls(environment);
        assertEquals("cluster", environment.path("QUARKUS_REDIS_CLIENT_TYPE").asText());
        List<String> nodes = new ArrayList<>();
        services.fields().forEachRemaining(service -> {
            if (service.getValue().path("command").toString().contains("\"--cluster-enabled\",\"yes\"")) {
                nodes.add(service.getKey());
            }
        });
        assertEquals(6, nodes.size(), "three primaries and three replicas: " + nodes);
        for (String node : nodes) {
            assertTrue(environment.path("QUARKUS_REDIS_HOSTS").asText().contains("redis://" + node + ":6379"), node);
        }
        assertEquals("service_healthy", ledger.path("depends_on").path("postgres").path("condition").asText());
        assertEquals("service_completed_successfully",
                ledger.path("depends_on").path("redis-cluster-create").path("condition").asText());
        assertTrue(ledger.path("healthcheck").path("test").toString().contains(READY));
        long needed = seconds(environment.path("QUARKUS_SHUTDOWN_DELAY").asText()) + shutdownTimeoutSeconds();
        assertTrue(needed < seconds(ledger.path("stop_grace_period").asText()), "stop_grace_period after delay + timeout " + needed + " s");

        String mounted = services.path("haproxy").path("volumes").get(0).asText();
        Path config = Path.of(mounted.substring(0, mounted.indexOf(':')));
        String haproxy = Files.readString(config);
        assertTrue(haproxy.contains("option httpchk GET " + READY), config + " checks readiness");
        assertTrue(haproxy.contains("server-template ledger " + replicas + " ledger:" + PORT), config + " names every replica");
    }

    private static long shutdownTimeoutSeconds() throws IOException {
        String timeout = last(Pattern.compile("(?m)^quarkus\\.shutdown\\.timeout=(\\S+)$"), Files.readString(APPLICATION_PROPERTIES));
        assertTrue(timeout != null, "quarkus.shutdown.timeout in " + APPLICATION_PROPERTIES);
        return seconds(timeout);
    }

    private static long seconds(String duration) {
        Matcher m = Pattern.compile("(\\d+)s").matcher(duration);
        assertTrue(m.matches(), "a duration in seconds: " + duration);
        return Long.parseLong(m.group(1));
    }

    /** The reactive and the JDBC URL name the same database; Redis is a redis:// URL. */
    private static void assertConnectionUrls(JsonNode environment) {
        String reactive = environment.path("QUARKUS_DATASOURCE_REACTIVE_URL").asText();
        String jdbc = environment.path("QUARKUS_DATASOURCE_JDBC_URL").asText();
        assertTrue(reactive.startsWith("postgresql://"), reactive);
        assertEquals("jdbc:" + reactive, jdbc, "Flyway (JDBC) and the request path (reactive) use one database");
        assertTrue(environment.path("QUARKUS_REDIS_HOSTS").asText().startsWith("redis://"));
    }

    private static void assertProbe(JsonNode probe, String path) {
        assertEquals(path, probe.path("httpGet").path("path").asText(), probe.toString());
        assertEquals(PORT, probe.path("httpGet").path("port").asInt(), probe.toString());
    }

    private static long mebibytes(String quantity) {
        Matcher m = Pattern.compile("(\\d+)(Mi|Gi)").matcher(quantity);
        assertTrue(m.matches(), "memory quantity " + quantity);
        return Long.parseLong(m.group(1)) * (m.group(2).equals("Gi") ? 1024 : 1);
    }

    private static String last(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        String found = null;
        while (m.find()) {
            found = m.group(1);
        }
        return found;
    }

    private static List<String> names(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** The text of a Markdown file's "## heading" section, up to the next "## " heading or the end. */
    private static String section(Path file, String heading) throws IOException {
        String text = Files.readString(file);
        int start = text.indexOf("\n## " + heading + "\n");
        assertTrue(start >= 0, file + " has no section '## " + heading + "'");
        int end = text.indexOf("\n## ", start + 1);
        return end < 0 ? text.substring(start) : text.substring(start, end);
    }

    private static List<String> secretKeysInDeploymentDoc() throws IOException {
        List<String> keys = new ArrayList<>();
        Matcher literal = Pattern.compile("--from-literal=([A-Z0-9_]+)=").matcher(Files.readString(DEPLOYMENT_DOC));
        while (literal.find()) {
            keys.add(literal.group(1));
        }
        return keys;
    }

    private static JsonNode compose() throws IOException {
        return YAML.readTree(Path.of("compose.yaml").toFile());
    }

    private static JsonNode composeCluster() throws IOException {
        return YAML.readTree(Path.of("compose.cluster.yaml").toFile());
    }

    private static JsonNode configMap() throws IOException {
        return kubernetes("ConfigMap");
    }

    /** The one document of this kind in target/kubernetes/kubernetes.yml. */
    private static JsonNode kubernetes(String kind) throws IOException {
        Path manifest = Path.of("target/kubernetes/kubernetes.yml");
        assertTrue(Files.exists(manifest), "no " + manifest + ": quarkus-kubernetes writes it at package time");
        List<JsonNode> found = new ArrayList<>();
        try (MappingIterator<JsonNode> documents = new ObjectMapper(new YAMLFactory()).readerFor(JsonNode.class)
                .readValues(manifest.toFile())) {
            documents.forEachRemaining(document -> {
                if (kind.equals(document.path("kind").asText())) {
                    found.add(document);
                }
            });
        }
        assertEquals(1, found.size(), "documents of kind " + kind);
        return found.get(0);
    }
}
