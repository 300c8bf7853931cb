package dev.ledger.testing;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Installs {@link ServedDocument} before every test of the suite (registered for all of them in
 * {@code META-INF/services}, with JUnit's extension auto-detection switched on by the pom's
 * surefire and failsafe settings). A {@code @QuarkusTest} runs in Quarkus' own class loader,
 * with its own copy of RestAssured's static defaults, so the filter is installed through the
 * class loader of the test instance, whichever it is.
 */
public class InstallServedDocument implements BeforeEachCallback {
    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        ClassLoader loader = context.getRequiredTestInstance().getClass().getClassLoader();
        Class<?> served;
        try {
            served = Class.forName(ServedDocument.class.getName(), true, loader);
        } catch (ClassNotFoundException notATestOfTheApi) {
            return;
        }
        served.getMethod("install").invoke(null);
    }
}
