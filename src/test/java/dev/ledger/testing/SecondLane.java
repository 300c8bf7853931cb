package dev.ledger.testing;

import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A failsafe class that runs beside the others, in a second lane: one such class at a time (they share one lock), its
 * methods one after another in their order, while the classes without it go on one after another in the first. For
 * the classes that mostly wait on purpose (an outage, a consumer session, Prometheus evaluating a rule) and keep to
 * servers, ports, databases and brokers of their own, so that the CPU-bound classes (starts, storms) use the cores
 * they leave idle (docs/testing.md, "Two lanes"). The pom's failsafe configuration switches JUnit's parallel execution
 * on, with every class in the same thread unless it says otherwise.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock("the second lane")
public @interface SecondLane {
}
