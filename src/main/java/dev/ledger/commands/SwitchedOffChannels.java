package dev.ledger.commands;

import io.quarkus.logging.LoggingFilter;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.function.Predicate;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A door switched off ({@code ledger.messaging.rabbitmq.enabled} or {@code ledger.messaging.kafka.enabled}
 * false, the defaults of a packaged application) disables its channels on purpose, and SmallRye's start-up
 * warning that they are unconnected (SRMSG00207) tells an operator nothing: it is dropped when every
 * component it names is on a channel disabled by configuration, and kept when any other is named.
 */
@LoggingFilter(name = "switched-off-channels")
public final class SwitchedOffChannels implements Filter {
    private static final Pattern CHANNEL = Pattern.compile("(?:channel|incoming|outgoing):'([^']+)'");

    @Override
    public boolean isLoggable(LogRecord record) {
        String message = record.getMessage();
        if (message == null || !message.startsWith("SRMSG00207")) {
            return true;
        }
        Object[] parameters = record.getParameters();
        String text = parameters == null || parameters.length == 0 ? message : format(message, parameters);
        Config config = ConfigProvider.getConfig();
        return !onlySwitchedOff(text, channel -> disabled(config, channel));
    }

    /** Whether the warning names channels, all of them disabled. */
    static boolean onlySwitchedOff(String warning, Predicate<String> disabled) {
        Matcher named = CHANNEL.matcher(warning);
        boolean any = false;
        while (named.find()) {
            any = true;
            if (!disabled.test(named.group(1))) {
                return false;
            }
        }
        return any;
    }

    private static boolean disabled(Config config, String channel) {
        for (String direction : new String[] {"incoming", "outgoing"}) {
            if (config.getOptionalValue("mp.messaging." + direction + "." + channel + ".enabled", Boolean.class)
                    .filter(enabled -> !enabled).isPresent()) {
                return true;
            }
        }
        return false;
    }

    private static String format(String message, Object[] parameters) {
        StringBuilder text = new StringBuilder(message);
        for (Object parameter : parameters) {
            text.append(' ').append(parameter);
        }
        return text.toString();
    }
}
