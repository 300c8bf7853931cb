package dev.ledger.floor;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The Vert.x floor: one plain route, ahead of every other, that reads the request to its end and answers the
 * fixed bytes, as the service's POST routes answer a replay (201 and {@code Idempotent-Replayed} to a POST,
 * 200 to anything else). No path matching, body handler, security or metrics: what is left is Quarkus' HTTP
 * server, Vert.x and Netty.
 */
@ApplicationScoped
public class VertxFloor {

    void route(@Observes Router router, @ConfigProperty(name = "floor.door") String door) {
        if ("vertx".equals(door)) {
            router.route().order(Integer.MIN_VALUE).handler(VertxFloor::answer);
        }
    }

    private static void answer(RoutingContext context) {
        HttpServerRequest request = context.request();
        // the request is read to its end (its body dropped) before the answer, as the service reads it;
        // Quarkus hands the route a paused request
        if (request.isEnded()) {
            send(context.response(), request.method() == HttpMethod.POST);
        } else {
            request.end().onComplete(ended -> send(context.response(), request.method() == HttpMethod.POST));
            request.resume();
        }
    }

    private static void send(HttpServerResponse response, boolean post) {
        response.putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
        if (post) {
            response.setStatusCode(201).putHeader(Answer.REPLAYED, "true");
        }
        response.end(Buffer.buffer(Answer.BODY));
    }
}
