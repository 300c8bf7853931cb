package dev.ledger.commands.rabbitmq;

import io.quarkus.logging.LoggingFilter;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.logging.Filter;
import java.util.logging.LogRecord;

/**
 * With payment commands switched off ({@code ledger.messaging.rabbitmq.enabled=false}, the default of
 * a packaged application), their channels are disabled on purpose, and SmallRye's start-up warning
 * that they are unconnected (SRMSG00207) tells an operator nothing: it is dropped, and only then.
 */
@LoggingFilter(name = "switched-off-channels")
public final class SwitchedOffChannels implements Filter {
    private final boolean enabled;

    public SwitchedOffChannels(@ConfigProperty(name = "ledger.messaging.rabbitmq.enabled", defaultValue = "false") boolean enabled) {
        this.enabled = enabled;
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        return enabled || record.getMessage() == null || !record.getMessage().startsWith("SRMSG00207");
    }
}
