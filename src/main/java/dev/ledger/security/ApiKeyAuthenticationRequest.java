package dev.ledger.security;

import io.quarkus.security.identity.request.BaseAuthenticationRequest;

/** A well-formed API key taken from {@code Authorization: Bearer <key>}, to be checked by {@link ApiKeyIdentityProvider}. */
public final class ApiKeyAuthenticationRequest extends BaseAuthenticationRequest {
    private final String key;

    public ApiKeyAuthenticationRequest(String key) {
        this.key = key;
    }

    public String key() {
        return key;
    }

    @Override
    public String toString() {
        return "ApiKeyAuthenticationRequest[key redacted]";
    }
}
