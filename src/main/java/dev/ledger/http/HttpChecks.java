package dev.ledger.http;

import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * The order in which every request meets the service's checks before an endpoint, in one place. The
 * checks are two routes, one on each side of Quarkus' security handlers, so that a request passes two of
 * the service's routes on its way, not one per check:
 * <ol>
 *   <li>{@link #BEFORE_AUTHENTICATION}: {@link HttpLayerFailures#watch} watches the connection for a body
 *       the HTTP codec cannot read, whatever runs later; then {@link RequestLimits}: 414 and 431 from the
 *       request line and headers;</li>
 *   <li>Quarkus' security handlers (orders -300 to -100): authentication, the 401, which API.md decides
 *       before every other check;</li>
 *   <li>{@link #AFTER_AUTHENTICATION}: {@link AcceptableResponses}: 406 from {@code Accept}; then
 *       {@link DeclaredBodyLimit}: 413 from a declared {@code Content-Length}, before Quarkus'
 *       {@code enforceMaxBodySize} (order -2) would answer it with no body;</li>
 *   <li>the routes of each path ({@link AllowedMethods}: 405 with {@code Allow}), then the endpoint
 *       ({@link IdempotentPosts} for a POST: 415, the key, the body);</li>
 *   <li>{@link #FAILURES} {@link HttpLayerFailures#failed}: a failure no route answered, just before
 *       Quarkus' own error handler (last).</li>
 * </ol>
 */
@ApplicationScoped
class HttpChecks {
    static final int BEFORE_AUTHENTICATION = -1_000;
    static final int AFTER_AUTHENTICATION = -3;
    static final int FAILURES = Integer.MAX_VALUE - 1;

    private final RequestLimits requestLimits;
    private final DeclaredBodyLimit declaredBodyLimit;
    private final HttpLayerFailures layerFailures;

    HttpChecks(RequestLimits requestLimits, DeclaredBodyLimit declaredBodyLimit, HttpLayerFailures layerFailures) {
        this.requestLimits = requestLimits;
        this.declaredBodyLimit = declaredBodyLimit;
        this.layerFailures = layerFailures;
    }

    void register(@Observes Router router) {
        router.route().order(BEFORE_AUTHENTICATION).handler(context -> {
            HttpLayerFailures.watch(context);
            if (!requestLimits.refused(context)) {
                context.next();
            }
        });
        router.route().order(AFTER_AUTHENTICATION).handler(context -> {
            if (!AcceptableResponses.refused(context) && !declaredBodyLimit.refused(context)) {
                context.next();
            }
        });
        router.route().order(FAILURES).failureHandler(layerFailures::failed);
    }
}
