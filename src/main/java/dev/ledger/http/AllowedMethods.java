package dev.ledger.http;

import dev.ledger.problem.ProblemMapper;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Another method on an API path answers 405 {@code method-not-allowed} with {@code Allow}, as
 * RFC 9110 requires of a 405. Neither layer does both alone: Quarkus REST answers its own paths'
 * 405 without {@code Allow}, and a path served only by Vert.x routes ({@code /accounts}, whose
 * one method is the POST route) would otherwise be a 404.
 */
@ApplicationScoped
public class AllowedMethods {
    private static final Set<HttpMethod> READ = Set.of(HttpMethod.GET, HttpMethod.HEAD);
    private static final Map<String, Set<HttpMethod>> PATHS = Map.of(
            "/accounts", Set.of(HttpMethod.POST),
            "/accounts/:id", READ,
            "/accounts/:id/transactions", Set.of(HttpMethod.POST, HttpMethod.GET, HttpMethod.HEAD),
            "/accounts/:id/transactions/:txId", READ,
            "/idempotency-keys/:key", READ,
            "/transfers", Set.of(HttpMethod.POST),
            "/transfers/:id", READ,
            "/transfers/:id/post", Set.of(HttpMethod.POST),
            "/transfers/:id/void", Set.of(HttpMethod.POST),
            "/transfers/:id/reversals", Set.of(HttpMethod.POST));

    void register(@Observes Router router) {
        PATHS.forEach((path, allowed) -> allow(router, path, allowed));
    }

    private static void allow(Router router, String path, Set<HttpMethod> allowed) {
        String header = allowed.stream().map(HttpMethod::name).sorted().collect(Collectors.joining(", "));
        router.route(path).handler(context -> {
            if (allowed.contains(context.request().method())) {
                context.next();
            } else {
                ProblemMapper.send(context.response(), ProblemMapper.methodNotAllowed(), Map.of("Allow", header));
            }
        });
    }
}
