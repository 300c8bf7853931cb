package dev.ledger.testing;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Duration;

/**
 * Makes every {@code await()} of the suite look at its condition at once, then every poll interval:
 * Awaitility waits one poll interval (100 ms) before its first look unless told, and the suite makes
 * thousands of waits whose condition already holds. Registered for every test class in
 * {@code META-INF/services} (JUnit's extension auto-detection, switched on by the pom). A
 * {@code @QuarkusTest} runs in Quarkus' own class loader, with its own copy of Awaitility's static
 * defaults, so the default is set through the test class's loader, whichever it is.
 */
public class AwaitAtOnce implements BeforeAllCallback, BeforeEachCallback {
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        setDefault(context.getRequiredTestClass().getClassLoader());
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        setDefault(context.getRequiredTestInstance().getClass().getClassLoader());
    }

    private static void setDefault(ClassLoader loader) throws Exception {
        Class<?> awaitility;
        try {
            awaitility = Class.forName("org.awaitility.Awaitility", true, loader);
        } catch (ClassNotFoundException noAwaitility) {
            return;
        }
        awaitility.getMethod("setDefaultPollDelay", Duration.class).invoke(null, Duration.ZERO);
    }
}
