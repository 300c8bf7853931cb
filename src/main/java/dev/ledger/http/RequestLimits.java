package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemType;
import io.vertx.core.MultiMap;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;

/**
 * The API's limits on the request target and the header section, answered as problems: 414
 * {@code uri-too-long} past {@code ledger.request.max-uri-length}, 431 {@code headers-too-large} past
 * {@code ledger.request.max-header-bytes}. The HTTP codec has limits of its own
 * ({@code quarkus.http.limits.max-initial-line-length}, {@code max-header-size}) and refuses a request
 * past them with a bare status before any handler runs: Quarkus never sets the Vert.x server's invalid
 * request handler, so no application code sees that request. Those are set well above these, so only
 * a request far past the API's limits meets them. Checked before authentication, as the codec's are:
 * a request the API will not read is refused whoever sends it.
 */
@ApplicationScoped
public class RequestLimits {
    private final int maxUriLength;
    private final int maxHeaderBytes;

    public RequestLimits(LedgerConfig config) {
        this.maxUriLength = config.request().maxUriLength();
        this.maxHeaderBytes = config.request().maxHeaderBytes();
    }

    /** Whether the request is past a limit, and was answered so ({@link HttpChecks} runs this). */
    boolean refused(RoutingContext context) {
        int uriLength = context.request().uri().length();
        long headerBytes = headerBytes(context.request().headers());
        if (uriLength > maxUriLength) {
            EarlyRefusal.send(context, new Problem(ProblemType.URI_TOO_LONG, "The request target is " + uriLength
                    + " characters long; at most " + maxUriLength + " are accepted"), Map.of());
            return true;
        }
        if (headerBytes > maxHeaderBytes) {
            EarlyRefusal.send(context, new Problem(ProblemType.HEADERS_TOO_LARGE, "The request headers take " + headerBytes
                    + " bytes; at most " + maxHeaderBytes + " are accepted"), Map.of());
            return true;
        }
        return false;
    }

    /** The header section's size as sent: each field line {@code name: value} and its CRLF (Netty keeps them as ISO-8859-1). */
    static long headerBytes(MultiMap headers) {
        long bytes = 0;
        for (Map.Entry<String, String> header : headers) {
            bytes += header.getKey().length() + 2 + header.getValue().length() + 2;
        }
        return bytes;
    }
}
