package dev.ledger.redis;

import java.nio.charset.StandardCharsets;

/**
 * The Redis Cluster hash slot of a key: CRC16 (XMODEM) of its hash tag (the part between the first
 * {@code {}} and the next {@code }}, when not empty) or of the whole key, modulo 16384, as
 * the Redis Cluster specification defines it.
 */
final class HashSlot {
    static final int COUNT = 16384;
    private static final int[] TABLE = new int[256];

    static {
        for (int i = 0; i < 256; i++) {
            int crc = i << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
            TABLE[i] = crc & 0xFFFF;
        }
    }

    private HashSlot() {
    }

    static int of(String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        int from = 0;
        int to = bytes.length;
        int open = indexOf(bytes, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(bytes, (byte) '}', open + 1);
            if (close > open + 1) {
                from = open + 1;
                to = close;
            }
        }
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ bytes[i]) & 0xFF]) & 0xFFFF;
        }
        return crc % COUNT;
    }

    private static int indexOf(byte[] bytes, byte wanted, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }
}
