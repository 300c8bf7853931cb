package dev.ledger.floor;

import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.ResponseHeader;
import org.jboss.resteasy.reactive.ResponseStatus;

/**
 * The Quarkus REST floor (with {@code floor.door=rest}): the service's two paths as a resource on the event
 * loop, answering the fixed bytes; what a request costs through Quarkus REST's resource machinery (path
 * matching, parameters, the body's reader, the entity writer) and nothing of the service's.
 */
@Path("/accounts/{id}")
@NonBlocking
public class RestFloor {

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public byte[] read(@PathParam("id") String id) {
        return Answer.BODY;
    }

    @POST
    @Path("transactions")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @ResponseStatus(201)
    @ResponseHeader(name = Answer.REPLAYED, value = "true")
    public byte[] post(@PathParam("id") String id, byte[] body) {
        return Answer.BODY;
    }
}
