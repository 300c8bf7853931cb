package dev.ledger.testing;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Duration;

/**
 * The suite's defaults, set for every test class (registered in {@code META-INF/services}, with JUnit's
 * extension auto-detection switched on by the pom's surefire and failsafe settings):
 * <ul>
 *   <li>every {@code await()} looks at its condition at once, then every poll interval: Awaitility waits
 *       one poll interval (100 ms) before its first look unless told, and the suite makes thousands of
 *       waits whose condition already holds;</li>
 *   <li>every answer RestAssured receives is checked against the served OpenAPI document
 *       ({@link ServedDocument}, a default filter), installed before each test.</li>
 * </ul>
 * A {@code @QuarkusTest} runs in Quarkus' own class loader, with its own copies of Awaitility's and
 * RestAssured's static defaults, so both are set through the test's own loader, whichever it is.
 */
public class SuiteDefaults implements BeforeAllCallback, BeforeEachCallback {
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Class<?> awaitility = load("org.awaitility.Awaitility", context.getRequiredTestClass().getClassLoader());
        if (awaitility != null) {
            awaitility.getMethod("setDefaultPollDelay", Duration.class).invoke(null, Duration.ZERO);
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        // the instance's loader: the one whose RestAssured the test's requests go through
        Class<?> served = load(ServedDocument.class.getName(), context.getRequiredTestInstance().getClass().getClassLoader());
        if (served != null) {
            served.getMethod("install").invoke(null);
        }
    }

    /** The class as {@code loader} has it; null where the test has no such class on its path. */
    private static Class<?> load(String name, ClassLoader loader) {
        try {
            return Class.forName(name, true, loader);
        } catch (ClassNotFoundException absent) {
            return null;
        }
    }
}
