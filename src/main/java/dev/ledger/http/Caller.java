package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.security.ApiKeys;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.security.QuarkusHttpUser;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Who is calling: the client (tenant) that owns accounts and idempotency keys. It is the principal
 * of the request's API key ({@code dev.ledger.security}), or the one client {@code default} when
 * {@code ledger.auth.enabled=false}. Every owner filter and idempotency scope takes it from here.
 */
@ApplicationScoped
public class Caller {

    private final SecurityIdentity identity;
    private final boolean authEnabled;

    public Caller(SecurityIdentity identity, LedgerConfig config) {
        this.identity = identity;
        this.authEnabled = config.auth().enabled();
    }

    public String clientId() {
        if (!authEnabled) {
            return ApiKeys.DEFAULT_CLIENT;
        }
        return nameOf(identity);
    }

    /**
     * The same for a Vert.x route, which runs outside the CDI request context: the identity the
     * HTTP permission check resolved and left on the routing context.
     */
    public String clientId(RoutingContext context) {
        if (!authEnabled) {
            return ApiKeys.DEFAULT_CLIENT;
        }
        return nameOf(context.user() instanceof QuarkusHttpUser user ? user.getSecurityIdentity() : null);
    }

    private static String nameOf(SecurityIdentity identity) {
        // The HTTP permission refuses anonymous requests before any resource runs; reaching this
        // without an identity is a configuration bug, and acting as some client would leak data.
        if (identity == null || identity.isAnonymous()) {
            throw new IllegalStateException("An unauthenticated request reached a resource");
        }
        return identity.getPrincipal().getName();
    }
}
