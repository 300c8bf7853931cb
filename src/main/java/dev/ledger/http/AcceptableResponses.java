package dev.ledger.http;

import dev.ledger.problem.ProblemMapper;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Refuses a request whose {@code Accept} does not admit {@code application/json}, the type of every
 * answer of this API (errors are {@code application/problem+json} whatever {@code Accept} says, as RFC
 * 9457 intends): 406 {@code not-acceptable}, decided from the headers before anything runs, so a POST
 * is neither reserved nor executed only to be unreadable. One rule for every path outside {@code /q/}:
 * the POST routes have no negotiation of their own, and Quarkus REST's for the GETs takes {@code q=0}
 * for "acceptable". It runs after authentication (order -100, API.md: "decided before every other
 * check") and before anything looks at the body or the path: the 413, 405, 415 and 400 refusals.
 */
final class AcceptableResponses {
    private static final Pattern WEIGHT = Pattern.compile("0(\\.[0-9]{0,3})?|1(\\.0{0,3})?");
    private static final Pattern ZERO_WEIGHT = Pattern.compile("0(\\.0{0,3})?");

    private AcceptableResponses() {
    }

    /** Whether the request's {@code Accept} admits no JSON, and it was answered so ({@link HttpChecks} runs this). */
    static boolean refused(RoutingContext context) {
        MultiMap headers = context.request().headers();
        // no Accept admits anything: no list is made for it
        if (!headers.contains(HttpHeaders.ACCEPT) || OperatingSurface.contains(context)
                || admitsJson(headers.getAll(HttpHeaders.ACCEPT))) {
            return false;
        }
        EarlyRefusal.send(context, ProblemMapper.notAcceptable(), Map.of());
        return true;
    }

    /**
     * Whether the {@code Accept} field lines admit {@code application/json} (RFC 9110 12.5.1): no field
     * admits anything; otherwise the most specific media range matching it ({@code application/json},
     * then {@code application/*}, then {@code *}{@code /*}) decides, and its weight must be above
     * {@code q=0}. Media type parameters other than the weight are not compared; a range that cannot be
     * read (for example {@code q=abc}) admits nothing.
     */
    static boolean admitsJson(List<String> fields) {
        int bestSpecificity = 0;
        boolean bestAdmits = false;
        boolean anyRange = false;
        for (String field : fields) {
            for (String element : field.split(",")) {
                if (element.isBlank()) {
                    continue;
                }
                anyRange = true;
                MediaRange range = MediaRange.parse(element);
                int specificity = range == null ? 0 : range.specificityFor("application", "json");
                if (specificity > bestSpecificity || (specificity == bestSpecificity && specificity > 0 && range.admits())) {
                    bestSpecificity = specificity;
                    bestAdmits = range.admits();
                }
            }
        }
        return !anyRange || bestAdmits;
    }

    /** One element of {@code Accept}: {@code type/subtype}, lower case, and whether its weight is above 0. */
    private record MediaRange(String type, String subtype, boolean admits) {
        static MediaRange parse(String element) {
            String[] parts = element.split(";", -1);
            String[] typeAndSubtype = parts[0].trim().toLowerCase(Locale.ROOT).split("/", -1);
            if (typeAndSubtype.length != 2 || !isToken(typeAndSubtype[0]) || !isToken(typeAndSubtype[1])
                    || (typeAndSubtype[0].equals("*") && !typeAndSubtype[1].equals("*"))) {
                return null;
            }
            boolean admits = true;
            for (int i = 1; i < parts.length; i++) {
                String parameter = parts[i].trim();
                if (parameter.length() > 1 && (parameter.charAt(0) == 'q' || parameter.charAt(0) == 'Q')
                        && parameter.charAt(1) == '=') {
                    String weight = parameter.substring(2);
                    if (!WEIGHT.matcher(weight).matches()) {
                        return null;
                    }
                    admits = !ZERO_WEIGHT.matcher(weight).matches();
                    break; // what follows the weight are accept-ext parameters
                }
            }
            return new MediaRange(typeAndSubtype[0], typeAndSubtype[1], admits);
        }

        /** 3 for the type itself, 2 for {@code type/*}, 1 for {@code *}{@code /*}, 0 when the range does not match it. */
        int specificityFor(String type, String subtype) {
            if (this.type.equals("*")) {
                return 1;
            }
            if (!this.type.equals(type)) {
                return 0;
            }
            return this.subtype.equals("*") ? 2 : this.subtype.equals(subtype) ? 3 : 0;
        }

        private static boolean isToken(String text) {
            if (text.isEmpty()) {
                return false;
            }
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (!(Character.isLetterOrDigit(c) && c < 0x80) && "!#$%&'*+-.^_`|~".indexOf(c) < 0) {
                    return false;
                }
            }
            return true;
        }
    }
}
