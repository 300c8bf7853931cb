package dev.ledger.testing;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** A test class of the DynamoDB store ({@link DynamoDbProfile}): it runs where the local servers give dynalite's endpoint. */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@EnabledIfEnvironmentVariable(named = "AWS_ENDPOINT_URL_DYNAMODB", matches = ".+",
        disabledReason = "dynalite comes with the local servers (pom profile local-services, .ci/services)")
public @interface WithDynalite {
}
