package dev.ledger.testing;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.restassured.OpenApiValidationFilter;
import io.restassured.RestAssured;
import io.restassured.filter.FilterContext;
import io.restassured.filter.OrderedFilter;
import io.restassured.response.Response;
import io.restassured.specification.FilterableRequestSpecification;
import io.restassured.specification.FilterableResponseSpecification;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Validates every answer a test receives through RestAssured against the OpenAPI document that the
 * application under test serves ({@code /q/openapi}), with Atlassian's swagger-request-validator:
 * an undocumented status, a body that does not match its schema, an undocumented content type or a
 * malformed documented header fails the test that received it. Requests are not validated: tests
 * send invalid ones on purpose, and the document only has to describe the answers to them.
 * Requests to {@code /q/} and to paths or methods the document does not describe pass unvalidated.
 *
 * <p>{@link SuiteDefaults} installs it as a RestAssured default filter before every test,
 * {@code @QuarkusTest} and {@code @QuarkusIntegrationTest} alike.
 */
public final class ServedDocument implements OrderedFilter {
    public static final ServedDocument INSTANCE = new ServedDocument();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** The methods an OpenAPI document can describe; tests also send made-up ones, which it cannot. */
    private static final Set<String> DOCUMENTABLE = Arrays.stream(Request.Method.values()).map(Enum::name)
            .collect(Collectors.toSet());

    /** The document of each application a test run talks to (test profiles restart it on other ports). */
    private final Map<String, OpenApiValidationFilter> validators = new ConcurrentHashMap<>();

    private ServedDocument() {
    }

    /** Makes sure this filter is one of RestAssured's defaults; called reflectively by {@link SuiteDefaults}. */
    public static void install() {
        if (!RestAssured.filters().contains(INSTANCE)) {
            RestAssured.filters(INSTANCE);
        }
    }

    @Override
    public Response filter(FilterableRequestSpecification request, FilterableResponseSpecification response,
                           FilterContext context) {
        URI uri = URI.create(request.getURI());
        if (uri.getPath().startsWith("/q/") || !DOCUMENTABLE.contains(request.getMethod())) {
            return context.next(request, response);
        }
        String base = uri.getScheme() + "://" + uri.getAuthority();
        return validators.computeIfAbsent(base, ServedDocument::validatorOf).filter(request, response, context);
    }

    /** A validator of answers against the document served at {@code base}. */
    public static OpenApiValidationFilter validatorOf(String base) {
        return validatorFor(fetch(base));
    }

    /** A validator of answers against {@code document} (JSON or YAML). */
    public static OpenApiValidationFilter validatorFor(String document) {
        return new OpenApiValidationFilter(OpenApiInteractionValidator.createForInlineApiSpecification(document)
                .withLevelResolver(LevelResolver.create()
                        .withLevel("validation.request", ValidationReport.Level.IGNORE)
                        .build())
                .build());
    }

    /** The document as the application serves it. */
    public static String fetch(String base) {
        try {
            HttpResponse<String> served = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/q/openapi?format=json")).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (served.statusCode() != 200) {
                throw new IllegalStateException("GET " + base + "/q/openapi answered " + served.statusCode());
            }
            return served.body();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the OpenAPI document of " + base, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Last, so that it sees the request as the other filters left it and the answer as it arrived. */
    @Override
    public int getOrder() {
        return OrderedFilter.LOWEST_PRECEDENCE;
    }
}
