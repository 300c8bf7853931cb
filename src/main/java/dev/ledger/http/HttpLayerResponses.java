package dev.ledger.http;

import dev.ledger.problem.Problem;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

/**
 * Describes on every operation the refusals the HTTP layer gives before any operation runs
 * ({@link RequestLimits}, {@link AcceptableResponses}, and the body handler's 417): once here rather
 * than as the same annotation on each method.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class HttpLayerResponses implements OASFilter {
    @Override
    public Operation filterOperation(Operation operation) {
        describe(operation, "406", OpenApiText.NOT_ACCEPTABLE);
        describe(operation, "414", OpenApiText.URI_TOO_LONG);
        describe(operation, "431", OpenApiText.HEADERS_TOO_LARGE);
        if (operation.getRequestBody() != null) {
            describe(operation, "417", OpenApiText.EXPECTATION);
        }
        return operation;
    }

    private static void describe(Operation operation, String status, String description) {
        APIResponses responses = operation.getResponses();
        if (responses == null || responses.hasAPIResponse(status)) {
            return;
        }
        responses.addAPIResponse(status, OASFactory.createAPIResponse().description(description)
                .content(OASFactory.createContent().addMediaType(Problem.MEDIA_TYPE,
                        OASFactory.createMediaType().schema(OASFactory.createSchema().ref("Problem")))));
    }
}
