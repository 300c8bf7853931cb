package dev.ledger.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.quarkus.vertx.web.Route;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.openapi.annotations.Operation;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The message interface beside the HTTP one: {@code GET /q/asyncapi} serves the AsyncAPI 3 document of
 * every channel (RabbitMQ and Kafka commands, outcomes, dead letters, events), YAML by default and JSON
 * with {@code ?format=json}, as {@code /q/openapi} does; {@code GET /q/asyncapi-ui} is a page that shows it.
 * The document is a file kept true by tests ({@code AsyncApiContract}), since no AsyncAPI generator
 * resolves at this Quarkus version; read once at start.
 */
@ApplicationScoped
public class MessageDocument {
    static final String DOCUMENT = "asyncapi.yaml";
    static final String PAGE = "asyncapi-ui.html";
    private final Buffer yaml;
    private final Buffer json;
    private final Buffer page;

    public MessageDocument(ObjectMapper mapper) {
        byte[] document = resource(DOCUMENT);
        this.yaml = Buffer.buffer(document);
        try {
            this.json = Buffer.buffer(mapper.writerWithDefaultPrettyPrinter()
                    .writeValueAsBytes(new YAMLMapper().readTree(document)));
        } catch (IOException e) {
            throw new UncheckedIOException("The AsyncAPI document " + DOCUMENT + " is not YAML", e);
        }
        this.page = Buffer.buffer(resource(PAGE));
    }

    @Route(path = "/q/asyncapi", methods = Route.HttpMethod.GET)
    @Operation(hidden = true)
    void document(RoutingContext context) {
        boolean asJson = "json".equalsIgnoreCase(context.request().getParam("format"));
        context.response()
                .putHeader("Content-Type", asJson ? "application/json;charset=UTF-8" : "application/yaml;charset=UTF-8")
                .end((asJson ? json : yaml).copy());
    }

    @Route(path = "/q/asyncapi-ui", methods = Route.HttpMethod.GET)
    @Operation(hidden = true)
    void page(RoutingContext context) {
        context.response().putHeader("Content-Type", "text/html;charset=UTF-8").end(page.copy());
    }

    private static byte[] resource(String name) {
        try (InputStream in = MessageDocument.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the application");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
