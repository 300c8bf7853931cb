package dev.ledger.http;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class DeclaredBodyLimitTest {
    @Test
    void readsDecimalLengths() {
        assertEquals(0, DeclaredBodyLimit.declaredLength("0"));
        assertEquals(65_537, DeclaredBodyLimit.declaredLength("65537"));
        assertEquals(65_536, DeclaredBodyLimit.declaredLength("000000000000000000000065536"));
    }

    @Test
    void lengthsPastALongAreTheLargest() {
        assertEquals(Long.MAX_VALUE, DeclaredBodyLimit.declaredLength("99999999999999999999999"));
    }

    @Test
    void whatIsNotALengthIsLeftToTheHttpCodec() {
        assertEquals(-1, DeclaredBodyLimit.declaredLength(""));
        assertEquals(-1, DeclaredBodyLimit.declaredLength("-1"));
        assertEquals(-1, DeclaredBodyLimit.declaredLength("+99999999"));
        assertEquals(-1, DeclaredBodyLimit.declaredLength("1e9"));
        assertEquals(-1, DeclaredBodyLimit.declaredLength("99999999, 99999999"));
    }
}
