package dev.ledger;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The layout's rules (docs/design.md, "Code layout"), checked on the compiled classes: doors know
 * their transport and call the engine; the engine knows neither doors nor servers; a store knows its
 * server and nothing of a door; no package imports one that imports it back.
 */
class ArchitectureTest {
    private static JavaClasses main;

    @BeforeAll
    static void importTheService() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.ledger");
    }

    @Test
    void noPackageImportsOneThatImportsItBack() {
        slices().matching("dev.ledger.(*)..").should().beFreeOfCycles().check(main);
    }

    @Test
    void theEngineKnowsNoDoorAndNoServer() {
        noClasses().that().resideInAPackage("dev.ledger.idempotency..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ledger.http..", "dev.ledger.commands..",
                        "dev.ledger.redis..", "dev.ledger.dynamodb..", "dev.ledger.fastpath..", "dev.ledger.outbox..", "dev.ledger.account..", "dev.ledger.transaction..",
                        "io.vertx.redis..", "io.vertx.mutiny.redis..", "io.vertx.core.http..", "io.vertx.ext.web..",
                        "io.smallrye.reactive.messaging..", "io.github.resilience4j..", "software.amazon.awssdk..")
                .check(main);
    }

    @Test
    void aStoreKnowsNoDoor() {
        noClasses().that().resideInAnyPackage("dev.ledger.redis..", "dev.ledger.dynamodb..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ledger.http..", "dev.ledger.commands..",
                        "dev.ledger.account..", "dev.ledger.transaction..", "dev.ledger.outbox..")
                .check(main);
    }

    @Test
    void aStoreKnowsNoOtherStore() {
        noClasses().that().resideInAPackage("dev.ledger.redis..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ledger.dynamodb..", "software.amazon.awssdk..").check(main);
        noClasses().that().resideInAPackage("dev.ledger.dynamodb..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ledger.redis..", "io.vertx.redis..", "io.vertx.mutiny.redis..")
                .check(main);
    }

    @Test
    void aDoorKnowsNoOtherDoor() {
        noClasses().that().resideInAPackage("dev.ledger.commands..")
                .should().dependOnClassesThat().resideInAPackage("dev.ledger.http..").check(main);
        noClasses().that().resideInAPackage("dev.ledger.http..")
                .should().dependOnClassesThat().resideInAPackage("dev.ledger.commands..").check(main);
    }

    @Test
    void theOutboxKnowsNoFeatureAndNoDoor() {
        noClasses().that().resideInAPackage("dev.ledger.outbox..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ledger.account..", "dev.ledger.transaction..",
                        "dev.ledger.http..", "dev.ledger.commands..")
                .check(main);
    }
}
