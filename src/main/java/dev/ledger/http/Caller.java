package dev.ledger.http;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * Who is calling: the client (tenant) that owns accounts and idempotency keys. Until API-key
 * authentication lands, every request acts as the one client {@code default}, which is what
 * API.md specifies for {@code ledger.auth.enabled=false}.
 */
@ApplicationScoped
public class Caller {
    public static final String DEFAULT_CLIENT = "default";

    public String clientId() {
        return DEFAULT_CLIENT;
    }
}
