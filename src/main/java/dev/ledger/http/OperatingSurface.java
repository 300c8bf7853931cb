package dev.ledger.http;

import io.vertx.ext.web.RoutingContext;

/**
 * The paths under {@code /q/} (health, OpenAPI, Swagger UI, metrics): Quarkus' own endpoints, which
 * answer in their own media types and error pages and need no API key (the permission
 * {@code quarkus.http.auth.permission.operations.paths=/q/*}); the API's rules stop at them.
 */
final class OperatingSurface {
    private OperatingSurface() {
    }

    static boolean contains(RoutingContext context) {
        String path = context.normalizedPath();
        return path.equals("/q") || path.startsWith("/q/");
    }
}
