package dev.ledger.http;

/**
 * The order in which every request meets the service's checks before an endpoint, in one place. Lower
 * runs first; Quarkus' own handlers sit between them at the orders named below.
 * <ol>
 *   <li>{@link #LAYER_FAILURES} {@link HttpLayerFailures}: watches the connection for a body the HTTP
 *       codec cannot read, whatever runs later;</li>
 *   <li>{@link #REQUEST_LIMITS} {@link RequestLimits}: 414 and 431 from the request line and headers;</li>
 *   <li>Quarkus' security handlers (orders -300 to -100): authentication, the 401, which API.md decides
 *       before every other check;</li>
 *   <li>{@link #ACCEPTABLE} {@link AcceptableResponses}: 406 from {@code Accept};</li>
 *   <li>{@link #DECLARED_BODY} {@link DeclaredBodyLimit}: 413 from a declared {@code Content-Length}, before
 *       Quarkus' {@code enforceMaxBodySize} (order -2) would answer it with no body;</li>
 *   <li>the routes of each path ({@link AllowedMethods}: 405 with {@code Allow}), then the endpoint
 *       ({@link IdempotentPosts} for a POST: 415, the key, the body);</li>
 *   <li>{@link #FAILURES} {@link HttpLayerFailures}: a failure no route answered, just before Quarkus' own
 *       error handler (last).</li>
 * </ol>
 */
final class RouteOrder {
    static final int LAYER_FAILURES = -1_001;
    static final int REQUEST_LIMITS = -1_000;
    static final int ACCEPTABLE = -4;
    static final int DECLARED_BODY = -3;
    static final int FAILURES = Integer.MAX_VALUE - 1;

    private RouteOrder() {
    }
}
