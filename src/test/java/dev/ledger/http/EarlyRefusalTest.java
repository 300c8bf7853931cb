package dev.ledger.http;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class EarlyRefusalTest {
    @Test
    void readsDecimalLengths() {
        assertEquals(0, EarlyRefusal.declaredLength("0"));
        assertEquals(65_537, EarlyRefusal.declaredLength("65537"));
        assertEquals(65_536, EarlyRefusal.declaredLength("000000000000000000000065536"));
    }

    @Test
    void lengthsPastALongAreTheLargest() {
        assertEquals(Long.MAX_VALUE, EarlyRefusal.declaredLength("99999999999999999999999"));
    }

    @Test
    void whatIsNotALengthIsLeftToTheHttpCodec() {
        assertEquals(-1, EarlyRefusal.declaredLength(""));
        assertEquals(-1, EarlyRefusal.declaredLength("-1"));
        assertEquals(-1, EarlyRefusal.declaredLength("+99999999"));
        assertEquals(-1, EarlyRefusal.declaredLength("1e9"));
        assertEquals(-1, EarlyRefusal.declaredLength("99999999, 99999999"));
    }
}
