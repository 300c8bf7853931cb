package dev.ledger.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The RabbitMQ connector reads three settings of an outgoing channel again for every message it publishes
 * ({@code retry-on-fail-attempts}, {@code retry-on-fail-interval}, {@code default-routing-key}), each read a walk
 * through every interceptor and config source: 3.6 % of the service's CPU per RabbitMQ command in a profile
 * (docs/performance.md, "RabbitMQ: the connector's settings read per message"). The configuration does not change
 * while the application runs (a new one is built at every start, with new interceptors), so this interceptor
 * keeps each such setting's first answer, absent ones too, and answers it again without walking the chain.
 * Any other setting passes through untouched.
 *
 * <p>The highest priority of the application's interceptors, so that it is asked first. Registered through
 * {@code META-INF/services}, as SmallRye Config finds interceptors.
 */
@Priority(Priorities.APPLICATION + 100)
public class SettingsReadPerMessage implements ConfigSourceInterceptor {
    private static final String OUTGOING = "mp.messaging.outgoing.";
    private static final String[] PER_MESSAGE = {".retry-on-fail-attempts", ".retry-on-fail-interval", ".default-routing-key"};

    private final Map<String, Optional<ConfigValue>> answers = new ConcurrentHashMap<>();

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        if (!readPerMessage(name)) {
            return context.proceed(name);
        }
        // not computeIfAbsent: the chain below runs other interceptors, which must not run inside the map's update
        Optional<ConfigValue> answer = answers.get(name);
        if (answer == null) {
            answer = Optional.ofNullable(context.proceed(name));
            answers.putIfAbsent(name, answer);
        }
        return answer.orElse(null);
    }

    static boolean readPerMessage(String name) {
        if (!name.startsWith(OUTGOING)) {
            return false;
        }
        for (String setting : PER_MESSAGE) {
            if (name.endsWith(setting)) {
                return true;
            }
        }
        return false;
    }
}
