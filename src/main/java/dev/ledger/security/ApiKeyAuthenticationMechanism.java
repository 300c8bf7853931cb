package dev.ledger.security;

import dev.ledger.config.LedgerConfig;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemMapper;
import dev.ledger.problem.ProblemType;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.IdentityProviderManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.AuthenticationRequest;
import io.quarkus.vertx.http.runtime.security.ChallengeData;
import io.quarkus.vertx.http.runtime.security.HttpAuthenticationMechanism;
import io.quarkus.vertx.http.runtime.security.HttpCredentialTransport;
import io.quarkus.vertx.http.runtime.security.HttpSecurityUtils;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads {@code Authorization: Bearer <api-key>} (the scheme name in any case, RFC 9110) and hands
 * the key to {@link ApiKeyIdentityProvider}. It runs only where the HTTP permission
 * {@code quarkus.http.auth.permission.api} asks for an identity (authentication is lazy), which is
 * before any resource, filter, Redis or Postgres sees the request. Every refusal is 401
 * {@code unauthorized} as problem+json with {@code WWW-Authenticate: Bearer realm="ledger"}:
 * <ul>
 *   <li>no header: the request is anonymous, the permission denies it, and Quarkus sends this
 *       mechanism's challenge ({@link #sendChallenge});</li>
 *   <li>a header that is not a well-formed bearer key, or an unknown key: authentication fails, and
 *       {@code ProblemMapper} answers the {@code AuthenticationFailedException} with {@link #refusal}.</li>
 * </ul>
 */
@ApplicationScoped
public class ApiKeyAuthenticationMechanism implements HttpAuthenticationMechanism {
    public static final String WWW_AUTHENTICATE = "WWW-Authenticate";
    public static final String CHALLENGE = "Bearer realm=\"ledger\"";
    public static final Map<String, String> CHALLENGE_HEADERS = Map.of(WWW_AUTHENTICATE, CHALLENGE);
    /** Keys are chosen by the operator; API.md asks for at least 24 characters. */
    public static final int MIN_KEY_LENGTH = 24;
    /** Far above any sensible key; keeps hashing bounded whatever the header size limit. */
    public static final int MAX_KEY_LENGTH = 512;
    private static final String SCHEME = "Bearer";
    private static final String FAILURE = ApiKeyAuthenticationMechanism.class.getName() + ".failure";

    /** Why a request is refused, for the problem's {@code detail}. Never repeats the key. */
    enum Failure {
        MISSING("This API needs an API key: send Authorization: Bearer <api-key>"),
        MALFORMED("The Authorization header must be 'Bearer <api-key>', with a key of " + MIN_KEY_LENGTH + " to "
                + MAX_KEY_LENGTH + " visible ASCII characters"),
        /** "Bearer Bearer <key>": the key pasted with its scheme where the scheme is added already (Swagger UI). */
        SCHEME_TWICE("The Authorization header names the scheme twice: send 'Bearer <api-key>' once (in Swagger UI, "
                + "paste the key alone: it adds 'Bearer ' itself)"),
        UNKNOWN("The API key is not valid");

        final String detail;

        Failure(String detail) {
            this.detail = detail;
        }
    }

    private final boolean enabled;

    public ApiKeyAuthenticationMechanism(LedgerConfig config) {
        this.enabled = config.auth().enabled();
    }

    @Override
    public Uni<SecurityIdentity> authenticate(RoutingContext context, IdentityProviderManager identities) {
        List<String> headers = context.request().headers().getAll(HttpHeaders.AUTHORIZATION);
        if (!enabled || headers.isEmpty()) {
            return Uni.createFrom().nullItem();
        }
        Optional<String> key = headers.size() == 1 ? bearerKey(headers.get(0)) : Optional.empty();
        if (key.isEmpty()) {
            context.put(FAILURE, headers.size() == 1 && schemeTwice(headers.get(0)) ? Failure.SCHEME_TWICE : Failure.MALFORMED);
            return Uni.createFrom().failure(new AuthenticationFailedException("malformed Authorization header"));
        }
        ApiKeyAuthenticationRequest request = new ApiKeyAuthenticationRequest(key.get());
        HttpSecurityUtils.setRoutingContextAttribute(request, context);
        return identities.authenticate(request)
                .onFailure().invoke(failure -> context.put(FAILURE, Failure.UNKNOWN));
    }

    /**
     * The key of a {@code Bearer} credential: the scheme in any case, one or more spaces, then
     * {@value #MIN_KEY_LENGTH} to {@value #MAX_KEY_LENGTH} visible ASCII characters (0x21-0x7E).
     */
    static Optional<String> bearerKey(String header) {
        if (header.length() <= SCHEME.length() || !header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
                || header.charAt(SCHEME.length()) != ' ') {
            return Optional.empty();
        }
        int start = SCHEME.length();
        while (start < header.length() && header.charAt(start) == ' ') {
            start++;
        }
        String key = header.substring(start);
        if (key.length() < MIN_KEY_LENGTH || key.length() > MAX_KEY_LENGTH) {
            return Optional.empty();
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return Optional.empty();
            }
        }
        return Optional.of(key);
    }

    /** {@code Bearer Bearer ...}, in any case and spacing. */
    static boolean schemeTwice(String header) {
        String[] words = header.trim().split(" +", 3);
        return words.length >= 2 && words[0].equalsIgnoreCase(SCHEME) && words[1].equalsIgnoreCase(SCHEME);
    }

    @Override
    public Uni<ChallengeData> getChallenge(RoutingContext context) {
        return Uni.createFrom().item(new ChallengeData(401, WWW_AUTHENTICATE, CHALLENGE));
    }

    /** The challenge with the problem body every error of this API has (the default one has none). */
    @Override
    public Uni<Boolean> sendChallenge(RoutingContext context) {
        if (!context.response().ended()) {
            ProblemMapper.send(context.response(), refusal(context), CHALLENGE_HEADERS);
        }
        return Uni.createFrom().item(true);
    }

    /** The 401 problem for a request this mechanism refused; its detail says why, never repeating the key. */
    public static Problem refusal(RoutingContext context) {
        Failure failure = context == null ? null : context.get(FAILURE);
        return new Problem(ProblemType.UNAUTHORIZED, (failure == null ? Failure.MISSING : failure).detail);
    }

    @Override
    public Set<Class<? extends AuthenticationRequest>> getCredentialTypes() {
        return Set.of(ApiKeyAuthenticationRequest.class);
    }

    @Override
    public Uni<HttpCredentialTransport> getCredentialTransport(RoutingContext context) {
        return Uni.createFrom().item(new HttpCredentialTransport(HttpCredentialTransport.Type.AUTHORIZATION, "bearer"));
    }
}
