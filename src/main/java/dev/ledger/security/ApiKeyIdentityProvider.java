package dev.ledger.security;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.IdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Turns an API key into the identity of the client it belongs to: the principal's name is the
 * client id. An unknown (or removed) key fails authentication. Hashing one short key and comparing
 * digests is CPU work of microseconds, so it runs on the calling thread.
 */
@ApplicationScoped
public class ApiKeyIdentityProvider implements IdentityProvider<ApiKeyAuthenticationRequest> {
    private final ApiKeys keys;

    public ApiKeyIdentityProvider(ApiKeys keys) {
        this.keys = keys;
    }

    @Override
    public Class<ApiKeyAuthenticationRequest> getRequestType() {
        return ApiKeyAuthenticationRequest.class;
    }

    @Override
    public Uni<SecurityIdentity> authenticate(ApiKeyAuthenticationRequest request, AuthenticationRequestContext context) {
        return keys.clientFor(request.key())
                .map(client -> Uni.createFrom().<SecurityIdentity>item(
                        QuarkusSecurityIdentity.builder().setPrincipal(new QuarkusPrincipal(client)).build()))
                .orElseGet(() -> Uni.createFrom().failure(new AuthenticationFailedException("unknown API key")));
    }
}
