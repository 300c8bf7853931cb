package dev.ledger.http;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.LedgerApi;
import io.restassured.path.json.JsonPath;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One HTTP/1.1 connection written byte by byte, for what a client library will not send: invalid
 * header characters, over-long lines, malformed chunks, several requests on one connection.
 */
final class RawHttp implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(URL base) throws IOException {
        socket = new Socket(base.getHost(), base.getPort());
        socket.setSoTimeout(10_000); // a bound on a failing test, not a wait
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** Writes text as ISO-8859-1, one byte a character, control characters included. */
    RawHttp send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    /** A credit of 5 at sequence 1 as the development client sends it, with extra field lines (each ending in CRLF). */
    static String credit(String target, String idempotencyKey, String extraFields) {
        String body = LedgerApi.transaction("CREDIT", 5, 1);
        return "POST " + target + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: " + ApiClient.DEV.authorization()
                + "\r\nIdempotency-Key: " + idempotencyKey + "\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length() + "\r\n" + extraFields + "\r\n" + body;
    }

    /** A body in the chunked transfer coding, in chunks of at most {@code size} characters. */
    static String chunked(String body, int size) {
        StringBuilder chunks = new StringBuilder();
        for (int start = 0; start < body.length(); start += size) {
            String chunk = body.substring(start, Math.min(body.length(), start + size));
            chunks.append(Integer.toHexString(chunk.length())).append("\r\n").append(chunk).append("\r\n");
        }
        return chunks.append("0\r\n\r\n").toString();
    }

    /** Reads one answer: status line, header fields, and a body of its {@code Content-Length}. */
    Answer read() throws IOException {
        String statusLine = line();
        Map<String, String> headers = new LinkedHashMap<>();
        for (String field = line(); !field.isEmpty(); field = line()) {
            int colon = field.indexOf(':');
            headers.put(field.substring(0, colon).trim().toLowerCase(Locale.ROOT), field.substring(colon + 1).trim());
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        assertEquals(length, body.length, "the connection closed inside the body");
        return new Answer(Integer.parseInt(statusLine.split(" ")[1]), headers, new String(body, StandardCharsets.UTF_8));
    }

    /** Whether the server closed the connection (what is left unread is discarded). */
    boolean closedByServer() throws IOException {
        try {
            while (in.read() >= 0) {
                // drain
            }
            return true;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the connection closed; read so far: " + line.toString(StandardCharsets.ISO_8859_1));
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    record Answer(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        /** Checks the answer is the problem {@code slug} with {@code status}, and answers its detail. */
        String assertProblem(int expectedStatus, String slug) {
            assertEquals(expectedStatus, status, this::toString);
            assertTrue(String.valueOf(header("Content-Type")).startsWith("application/problem+json"), this::toString);
            JsonPath problem = JsonPath.from(body);
            assertEquals("/problems/" + slug, problem.getString("type"), this::toString);
            assertEquals(expectedStatus, problem.getInt("status"), this::toString);
            return problem.getString("detail");
        }
    }
}
