package dev.ledger.security;

import dev.ledger.config.LedgerConfig;
import io.quarkus.runtime.Startup;
import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The configured API keys ({@code ledger.api-keys}): for each entry, the client it authenticates
 * and the SHA-256 of the key. Read once at start, so that a missing or malformed setting stops the
 * application there instead of locking every client out later. Error messages name an entry by
 * its position and never repeat any part of it: an entry may be a raw key pasted by mistake.
 */
@Startup
@Singleton
public class ApiKeys {
    private static final Logger LOG = Logger.getLogger(ApiKeys.class);
    static final String SETTING = "ledger.api-keys";
    private static final Pattern CLIENT_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-f]{64}");

    /** The one client every request and command acts as while authentication is off ({@code ledger.auth.enabled=false}). */
    public static final String DEFAULT_CLIENT = "default";

    /** A client id that no entry can name (parentheses are not allowed): the instance's own warm-up requests. */
    public static final String WARM_UP_CLIENT = "(warm-up)";

    private final List<Entry> entries;
    /** The key of the warm-up at start, while it runs ({@link #grantWarmUpKey}). */
    private volatile Entry warmUp;

    @Inject
    public ApiKeys(LedgerConfig config) {
        this(config.auth().enabled() ? parse(config.apiKeys().orElse("")) : List.of());
        if (config.auth().enabled()) {
            LOG.infof("API-key authentication on: %d key(s) for %d client(s)", entries.size(),
                    entries.stream().map(Entry::client).distinct().count());
        } else {
            LOG.warn("API-key authentication is OFF (ledger.auth.enabled=false): no key is checked and every "
                    + "request acts as the client 'default'" + (config.apiKeys().isPresent() ? "; ledger.api-keys is ignored" : ""));
        }
    }

    ApiKeys(List<Entry> entries) {
        this.entries = entries;
    }

    /** One configured key: whose it is, and the SHA-256 of the key. */
    record Entry(String client, byte[] digest) {
    }

    /** Parses the setting; throws a {@link ConfigurationException} that names the entry's position. */
    static List<Entry> parse(String setting) {
        if (setting.isBlank()) {
            throw new ConfigurationException(SETTING + " (environment variable LEDGER_API_KEYS) is not set: configure "
                    + "at least one client-id:sha256hex entry (see docs/security.md), or set ledger.auth.enabled=false");
        }
        String[] items = setting.split(",", -1);
        List<Entry> parsed = new ArrayList<>(items.length);
        for (int i = 0; i < items.length; i++) {
            int position = i + 1;
            String item = items[i].strip();
            int colon = item.indexOf(':');
            if (colon < 0) {
                throw malformed(position, "it has no ':' between client id and hash");
            }
            String client = item.substring(0, colon);
            String hash = item.substring(colon + 1);
            if (!CLIENT_ID.matcher(client).matches()) {
                throw malformed(position, "the client id must be 1-64 characters of A-Z a-z 0-9 . _ -");
            }
            if (!SHA256_HEX.matcher(hash).matches()) {
                throw malformed(position, "the hash must be the 64 lower-case hex digits of the key's SHA-256");
            }
            byte[] digest = HexFormat.of().parseHex(hash);
            for (int j = 0; j < parsed.size(); j++) {
                if (MessageDigest.isEqual(parsed.get(j).digest(), digest)) {
                    throw new ConfigurationException(SETTING + " entries " + (j + 1) + " and " + position
                            + " have the same hash: one key can authenticate only one client");
                }
            }
            parsed.add(new Entry(client, digest));
        }
        return List.copyOf(parsed);
    }

    private static ConfigurationException malformed(int position, String why) {
        return new ConfigurationException(SETTING + " entry " + position + " is not client-id:sha256hex: " + why);
    }

    /**
     * The client a presented key belongs to. Compares the key's digest with every entry in constant
     * time and does not stop at a match, so the time taken does not tell which entry matched.
     */
    public Optional<String> clientFor(String key) {
        byte[] digest = sha256(key);
        String client = null;
        for (Entry entry : entries) {
            boolean equal = MessageDigest.isEqual(entry.digest(), digest);
            if (equal && client == null) {
                client = entry.client();
            }
        }
        Entry warming = warmUp;
        if (client == null && warming != null && MessageDigest.isEqual(warming.digest(), digest)) {
            client = warming.client();
        }
        return Optional.ofNullable(client);
    }

    /**
     * A fresh random key that authenticates as {@link #WARM_UP_CLIENT} until {@link #revokeWarmUpKey}:
     * the instance sends its own warm-up requests with it at start (dev.ledger.warmup.WarmUp). It
     * exists only in this process's memory, is never logged, and its client owns nothing.
     */
    public String grantWarmUpKey() {
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String key = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        warmUp = new Entry(WARM_UP_CLIENT, sha256(key));
        return key;
    }

    public void revokeWarmUpKey() {
        warmUp = null;
    }

    /** The configured client ids, each once. */
    public java.util.Set<String> clients() {
        return entries.stream().map(Entry::client).collect(java.util.stream.Collectors.toCollection(java.util.LinkedHashSet::new));
    }

    /** Whether {@code client} has a key: the client ids broker commands are accepted from. */
    public boolean knowsClient(String client) {
        return entries.stream().anyMatch(entry -> entry.client().equals(client));
    }

    static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JVM", e);
        }
    }
}
