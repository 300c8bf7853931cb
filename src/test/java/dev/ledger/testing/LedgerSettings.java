package dev.ledger.testing;

import dev.ledger.config.LedgerConfig;
import io.smallrye.config.WithDefault;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** The service's own settings, as {@link LedgerConfig} types them: every {@code ledger.*} property and its default. */
public final class LedgerSettings {
    private LedgerSettings() {
    }

    /** Every property {@link LedgerConfig} reads, with its {@code @WithDefault} (empty when it has none). */
    public static Map<String, Optional<String>> defaults() {
        Map<String, Optional<String>> settings = new TreeMap<>();
        collect("ledger", LedgerConfig.class, settings);
        return settings;
    }

    /** Their environment variables ({@code LEDGER_...}). */
    public static Set<String> environmentVariables() {
        return defaults().keySet().stream().map(name -> name.toUpperCase().replace('.', '_').replace('-', '_'))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static void collect(String prefix, Class<?> type, Map<String, Optional<String>> settings) {
        for (Method method : type.getDeclaredMethods()) {
            if (method.isSynthetic() || method.isDefault() || method.getParameterCount() > 0) {
                continue;
            }
            String name = prefix + "." + method.getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
            // groups of settings by name (ledger.shards.<name>.*): the group's settings under the placeholder <name>
            if (method.getReturnType() == Map.class
                    && method.getGenericReturnType() instanceof ParameterizedType map
                    && map.getActualTypeArguments()[1] instanceof Class<?> group && isGroup(group)) {
                collect(name + ".<name>", group, settings);
            // a group of settings: an interface nested (at any depth) in LedgerConfig
            } else if (isGroup(method.getReturnType())) {
                collect(name, method.getReturnType(), settings);
            } else {
                WithDefault fallback = method.getAnnotation(WithDefault.class);
                settings.put(name, Optional.ofNullable(fallback).map(WithDefault::value));
            }
        }
    }

    private static boolean isGroup(Class<?> type) {
        return type.isInterface() && type.getName().startsWith(LedgerConfig.class.getName() + "$");
    }
}
